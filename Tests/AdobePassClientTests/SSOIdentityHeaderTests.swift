import AdobePassClient
import Foundation
import Hummingbird
import Logging
import RegcodeEngine
import Synchronization
import Testing

/// REST v2 single sign-on identity headers (sso.md §2.1–§2.3, §3.3 "regcoded (client)"): the platform identity
/// token and the service token come from the backend's `/_sim/identity/…` services, are cached until shortly before
/// their `exp`, and go on every `/api/v2/*` call except the `profiles/code/{code}` poll.
@Suite("AdobePassClient: SSO identity headers")
struct SSOIdentityHeaderTests {
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A JWS-shaped token for `sub` expiring `ttl` seconds from now; `serial` tells fetches apart.
    static func token(kind: String, sub: String, ttl: Int, serial: Int) -> String {
        let exp = Int(Date().timeIntervalSince1970) + ttl
        let payload = #"{"iss":"pass-sim-\#(kind)","sub":"\#(sub)","aud":"adobe","exp":\#(exp),"n":\#(serial)}"#
        return "\(base64URL(#"{"alg":"HS256","typ":"JWT"}"#)).\(base64URL(payload)).c2ln"
    }

    /// A backend whose identity services issue tokens living `ttl` seconds (or fail with `identityStatus`), and
    /// whose other endpoints answer enough for the parser.
    static func server(ttl: Int = 3600, identityStatus: HTTPResponse.Status = .ok) -> CaptureServer {
        let serial = Mutex(0)
        return CaptureServer { request in
            if request.path.hasPrefix("/_sim/identity/") {
                guard identityStatus == .ok else { return CaptureServer.json(identityStatus, #"{"error":"not_found"}"#) }
                let body = try JSONDecoder().decode([String: String].self, from: Data(request.body.utf8))
                let kind = request.path.hasSuffix("platform-token") ? "platform" : "service"
                let n = serial.withLock { value in
                    value += 1
                    return value
                }
                let token = Self.token(kind: kind, sub: body["sub"] ?? "?", ttl: ttl, serial: n)
                return CaptureServer.json(.ok, #"{"token":"\#(token)"}"#)
            }
            if request.path.hasSuffix("/configuration") { return CaptureServer.json(.ok, #"{"requestor":{"mvpds":[]}}"#) }
            if request.path.hasSuffix("/sessions") {
                return CaptureServer.json(
                    .ok,
                    #"{"actionName":"authorize","actionType":"direct","reasonType":"authenticatedSSO","mvpd":"Comcast_SSO"}"#
                )
            }
            if request.path.contains("/decisions/") {
                return CaptureServer.json(.ok, #"{"decisions":[{"resource":"Live","authorized":true}]}"#)
            }
            if request.path.contains("/logout/") { return CaptureServer.json(.ok, #"{"logouts":{}}"#) }
            return CaptureServer.json(.ok, #"{"profiles":{}}"#)
        }
    }

    static func context(_ identity: SSOIdentitySettings?, deviceID: String = Fixtures.deviceID) -> RegcodeEngine.RequestContext {
        var context = Fixtures.context(deviceID: deviceID, accessToken: "at")
        context.ssoIdentity = identity
        return context
    }

    static let everyCall: [BackendRequest] = [
        .configuration,
        .createSession(mvpd: "Comcast_SSO"),
        .checkAuthentication,
        .fetchProfile(mvpd: "Comcast_SSO"),
        .pollProfile(code: "ABC1234", mvpd: "Comcast_SSO"),
        .authorize(mvpd: "Comcast_SSO", resource: "Live"),
        .preauthorize(mvpd: "Comcast_SSO", resources: ["Live"]),
        .logout(mvpd: "Comcast_SSO"),
    ]

    @Test func headersOnTheCallsTheOASListsThemFor_tokensFetchedOnce() async throws {
        let server = Self.server()
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Self.context(SSOIdentitySettings(platformUser: "alice", serviceUser: "bob"))
            for request in Self.everyCall {
                let result = await client.execute(request, context: context)
                if case .failure(let failure) = result { Issue.record("\(request.name): \(failure)") }
            }
        }
        let requests = server.requests
        let identity = requests.filter { $0.path.hasPrefix("/_sim/identity/") }
        #expect(identity.map(\.path).sorted() == ["/_sim/identity/platform-token", "/_sim/identity/service-token"], "one fetch per token")
        let platformRequest = try #require(identity.first { $0.path.hasSuffix("platform-token") })
        let platformBody = try JSONDecoder().decode([String: String].self, from: Data(platformRequest.body.utf8))
        #expect(platformBody == ["sub": "alice", "did": Fixtures.deviceID], "the platform token names the device")
        let serviceRequest = try #require(identity.first { $0.path.hasSuffix("service-token") })
        #expect(try JSONDecoder().decode([String: String].self, from: Data(serviceRequest.body.utf8)) == ["sub": "bob"])

        let calls = requests.filter { $0.path.hasPrefix("/api/v2/") }
        #expect(calls.count == Self.everyCall.count)
        var withHeaders: [String] = []
        for call in calls {
            let subject = call.values("Adobe-Subject-Token")
            let service = call.values("AD-Service-Token")
            #expect(call.values("X-Roku-Reserved-Roku-Connect-Token").isEmpty)
            if call.path.contains("/profiles/code/") || call.path.hasSuffix("/configuration") {
                #expect(subject.isEmpty && service.isEmpty, "no SSO headers on the poll or the configuration (OAS)")
                continue
            }
            #expect(subject.count == 1 && service.count == 1, "\(call.method) \(call.path)")
            // The same cached token every time.
            let first = calls.first { !$0.values("Adobe-Subject-Token").isEmpty }
            #expect(subject.first == first?.header("Adobe-Subject-Token"))
            #expect(service.first == first?.header("AD-Service-Token"))
            if !subject.isEmpty { withHeaders.append(call.path) }
        }
        #expect(
            withHeaders == [
                "/api/v2/REF30/sessions", "/api/v2/REF30/profiles", "/api/v2/REF30/profiles/Comcast_SSO",
                "/api/v2/REF30/decisions/authorize/Comcast_SSO", "/api/v2/REF30/decisions/preauthorize/Comcast_SSO",
                "/api/v2/REF30/logout/Comcast_SSO",
            ]
        )
    }

    @Test func concurrentCallsShareOneFetch_andDevicesGetTheirOwnPlatformToken() async throws {
        let server = Self.server()
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let identity = SSOIdentitySettings(platformUser: "alice", rokuHeader: true)
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    let context = Self.context(identity, deviceID: index.isMultiple(of: 2) ? "device-a" : "device-b")
                    group.addTask { _ = await client.execute(.checkAuthentication, context: context) }
                }
            }
        }
        let requests = server.requests
        let fetches = requests.filter { $0.path == "/_sim/identity/platform-token" }
        let devices = try fetches.map { try JSONDecoder().decode([String: String].self, from: Data($0.body.utf8))["did"] ?? "" }
        #expect(devices.sorted() == ["device-a", "device-b"], "one fetch per device, however many calls at once")
        let calls = requests.filter { $0.path == "/api/v2/REF30/profiles" }
        #expect(calls.count == 20)
        #expect(calls.allSatisfy { $0.values("X-Roku-Reserved-Roku-Connect-Token").count == 1 && $0.values("Adobe-Subject-Token").isEmpty })
        #expect(Set(calls.compactMap { $0.header("X-Roku-Reserved-Roku-Connect-Token") }).count == 2)
    }

    @Test func tokenAtItsExpiryIsFetchedAgain() async throws {
        // A token that expires as it is issued is never reused (no wall-clock wait: the cache's rule is
        // "refresh before exp", and exp is now).
        let server = Self.server(ttl: 0)
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Self.context(SSOIdentitySettings(serviceUser: "bob"))
            for _ in 0..<3 { _ = await client.execute(.checkAuthentication, context: context) }
        }
        let requests = server.requests
        #expect(requests.filter { $0.path == "/_sim/identity/service-token" }.count == 3)
        #expect(requests.filter { $0.path.hasPrefix("/api/v2/") }.compactMap { $0.header("AD-Service-Token") }.count == 3)
    }

    @Test func identityServiceFailure_callGoesWithoutHeader() async throws {
        let server = Self.server(identityStatus: .notFound)
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL, logger: Fixtures.quietLogger)
            let context = Self.context(SSOIdentitySettings(platformUser: "alice"))
            #expect(await client.execute(.checkAuthentication, context: context) == .success(.authenticationStatus(false)))
            // The failure is remembered briefly: no second attempt right away.
            #expect(await client.execute(.checkAuthentication, context: context) == .success(.authenticationStatus(false)))
        }
        let requests = server.requests
        #expect(requests.filter { $0.path.hasPrefix("/_sim/identity/") }.count == 1)
        #expect(requests.filter { $0.path.hasPrefix("/api/v2/") }.allSatisfy { $0.values("Adobe-Subject-Token").isEmpty })
    }

    @Test func noIdentity_noFetch_andV1CallsNeverCarryTheHeaders() async throws {
        let server = Self.server()
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            _ = await client.execute(.checkAuthentication, context: Self.context(nil))
            _ = await client.execute(.checkAuthentication, context: Self.context(SSOIdentitySettings()))
            var v1 = Self.context(SSOIdentitySettings(platformUser: "alice"))
            v1.profile = .v1
            _ = await client.execute(.configuration, context: v1)
        }
        let requests = server.requests
        #expect(requests.allSatisfy { !$0.path.hasPrefix("/_sim/") })
        #expect(requests.allSatisfy { $0.values("Adobe-Subject-Token").isEmpty && $0.values("AD-Service-Token").isEmpty })
    }
}
