import Foundation
import Hummingbird
import PassSimulator
import RegcodeTestSupport
import Synchronization
import Testing

/// Adobe's premium SSO Service (SSO-SVC, revision 1.0.0): service tokens for a common identifier, link codes for a
/// second device, the devices linked, and the token taken by REST v2 as single sign-on.
@Suite("SSO Service: service tokens, link codes, linked devices")
struct SSOServiceTests {
    static func quiet(_ configuration: inout SimulatorConfiguration) {
        configuration.throttleEnabled = false
    }

    @Test func aCommonIdentifierGetsAServiceTokenAsAdobesSample() async throws {
        let harness = Harness(Self.quiet)
        try await harness.run { client in
            let credentials = try await client.credentials()
            let reply = try await client.ssoServiceToken(credentials, device: "tv", ssoId: "alice")
            #expect(reply.status == .created, "\(reply.text)")
            #expect(reply.contentType.hasPrefix("application/json"))
            let body = try reply.json()
            #expect(Set(body.keys) == ["status", "serviceToken", "notBefore", "notAfter"])
            #expect(body["status"] as? String == "CREATED")
            let now = harness.clock.epochMillisecondsNow / 1000 * 1000
            #expect(body["notBefore"] as? Int64 == now)
            #expect(body["notAfter"] as? Int64 == now + 3_600_000)
            let token = try #require(body["serviceToken"] as? String)
            // Adobe's step 2 payload: iss, sub, nbf, exp, iat, and the samples' HS256 header.
            let claims = try Client.jwtPart(token, 1)
            #expect(Set(claims.keys) == ["iss", "sub", "nbf", "exp", "iat"])
            #expect(claims["iss"] as? String == "ssoservicetoken")
            #expect(claims["sub"] as? String == "alice")
            #expect(claims["exp"] as? Int64 == (claims["iat"] as? Int64).map { $0 + 3600 })
            #expect(try Client.jwtPart(token, 0)["alg"] as? String == "HS256")
        }
    }

    @Test(arguments: [
        ("samples", ["serviceToken"], ["code"]), ("attributeTables", ["jws"], ["link"]), ("both", ["serviceToken", "jws"], ["code", "link"]),
    ])
    func fieldNamesFollowTheSetting(setting: String, tokenFields: [String], linkFields: [String]) async throws {
        let names = try #require(SSOServiceFieldNames(rawValue: setting))
        try await Harness {
            Self.quiet(&$0)
            $0.ssoService.fieldNames = names
        }.run { client in
            let credentials = try await client.credentials()
            let created = try await client.ssoServiceToken(credentials, device: "tv", ssoId: "alice").json()
            #expect(Set(created.keys) == Set(["status", "notBefore", "notAfter"] + tokenFields))
            let token = try #require(created[tokenFields[0]] as? String)
            for field in tokenFields { #expect(created[field] as? String == token) }
            let refreshed = try await client.refreshSSOServiceToken(credentials, token: token).json()
            #expect(Set(refreshed.keys) == Set(["status", "notBefore", "notAfter"] + tokenFields))
            let link = try await client.ssoLink(credentials, device: "tv", token: token).json()
            #expect(Set(link.keys) == Set(["status", "notBefore", "notAfter"] + linkFields))
        }
    }

    @Test func refreshWorksUntilTheRefreshWindowCloses() async throws {
        let harness = Harness(Self.quiet)
        try await harness.run { client in
            let credentials = try await client.credentials()
            let token = try await client.newSSOServiceToken(credentials, device: "tv", ssoId: "alice")
            harness.clock.advance(by: .seconds(1800))
            let refreshed = try await client.refreshSSOServiceToken(credentials, token: token)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let body = try refreshed.json()
            #expect(body["status"] as? String == "OK")
            let now = harness.clock.epochMillisecondsNow / 1000 * 1000
            #expect(body["notBefore"] as? Int64 == now)
            #expect(body["notAfter"] as? Int64 == now + 3_600_000)
            let fresh = try #require(body["serviceToken"] as? String)
            #expect(try Client.jwtPart(fresh, 1)["sub"] as? String == "alice")

            // Expired, but "recently" (the refresh window, 24 h by default): still refreshed.
            harness.clock.advance(by: .seconds(2 * 3600))
            #expect(try await client.refreshSSOServiceToken(credentials, token: fresh).status == .ok)
            // Past the window: a new token must come from POST. (A day on, the app holds a new access token too.)
            harness.clock.advance(by: .seconds(24 * 3600))
            let later = try await client.credentials()
            try expectSSOServiceError(
                try await client.refreshSSOServiceToken(later, token: fresh),
                status: .unauthorized,
                code: "token_expired",
                action: "get_new_token"
            )

            let tampered = String(token.dropLast(3)) + (token.hasSuffix("AAA") ? "BBB" : "AAA")
            try expectSSOServiceError(
                try await client.refreshSSOServiceToken(later, token: tampered),
                status: .unauthorized,
                code: "header_invalid",
                action: "get_new_token"
            )
            let missing = try await client.send(.get, "/api/REF30/serviceToken", headers: Client.authorized(later, device: nil))
            try expectSSOServiceError(missing, status: .badRequest, code: "header_missing", action: "check_headers")
        }
    }

    @Test func aLinkCodeGivesASecondDeviceATokenForTheSameCommonIdentifier() async throws {
        let harness = Harness(Self.quiet)
        try await harness.run { client in
            let phone = try await client.credentials()
            let tv = try await client.credentials()
            let phoneToken = try await client.newSSOServiceToken(phone, device: "phone", ssoId: "alice", deviceInfo: Client.iOSDeviceInfo)
            let link = try await client.ssoLink(phone, device: "phone", token: phoneToken)
            #expect(link.status == .created, "\(link.text)")
            let linkBody = try link.json()
            #expect(linkBody["status"] as? String == "CREATED")
            let code = try #require(linkBody["code"] as? String)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber), "\(code)")
            let notBefore = try #require(linkBody["notBefore"] as? Int64)
            #expect(notBefore == harness.clock.epochMillisecondsNow)
            #expect(linkBody["notAfter"] as? Int64 == notBefore + 30 * 60_000)

            // The lab sees the pending code.
            let pending = try await client.send(.get, "/_sim/sso/service").json()
            let codes = try #require(pending["linkCodes"] as? [[String: Any]])
            #expect(codes.map { $0["code"] as? String } == [code])
            #expect(codes.first?["commonId"] as? String == "alice")

            // Typed on the TV.
            let joined = try await client.ssoServiceToken(tv, device: "tv", link: code)
            #expect(joined.status == .created, "\(joined.text)")
            let tvToken = try #require(try joined.json()["serviceToken"] as? String)
            #expect(try Client.jwtPart(tvToken, 1)["sub"] as? String == "alice")
            // One time only.
            try expectSSOServiceError(
                try await client.ssoServiceToken(tv, device: "tv-2", link: code),
                status: .badRequest,
                code: "header_invalid",
                action: "check_headers"
            )
            #expect((try await client.send(.get, "/_sim/sso/service").json()["linkCodes"] as? [Any])?.isEmpty == true)

            // Each device lists the other ones: the TV joined by link (`sso`), the phone named the identifier (`regular`).
            let phoneID = Data("phone".utf8).base64EncodedString()
            let tvID = Data("tv".utf8).base64EncodedString()
            let fromPhone = try await client.ssoList(phone, device: "phone", token: phoneToken)
            #expect(fromPhone.status == .ok, "\(fromPhone.text)")
            let seenByPhone = try #require(try fromPhone.json()["devices"] as? [String: [String: Any]])
            #expect(Set(seenByPhone.keys) == [tvID])
            #expect(seenByPhone[tvID]?["type"] as? String == "sso")
            #expect(seenByPhone[tvID]?["model"] as? String == "AppleTV")
            #expect(seenByPhone[tvID]?["os"] as? String == "tvOS")
            #expect(seenByPhone[tvID]?["deviceType"] as? String == "SetTopBox")
            #expect(seenByPhone[tvID]?["lastSeen"] as? Int64 == harness.clock.epochMillisecondsNow)
            let seenByTV = try #require(try await client.ssoList(tv, device: "tv", token: tvToken).json()["devices"] as? [String: [String: Any]])
            #expect(Set(seenByTV.keys) == [phoneID])
            #expect(seenByTV[phoneID]?["type"] as? String == "regular")
            #expect(seenByTV[phoneID]?["os"] as? String == "iOS")
        }
    }

    @Test func anExpiredLinkCodeIsRefused() async throws {
        let harness = Harness {
            Self.quiet(&$0)
            $0.ssoService.linkCodeTTL = 300
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let token = try await client.newSSOServiceToken(credentials, device: "phone", ssoId: "alice")
            let link = try await client.ssoLink(credentials, device: "phone", token: token).json()
            let code = try #require(link["code"] as? String)
            #expect(link["notAfter"] as? Int64 == (link["notBefore"] as? Int64).map { $0 + 300_000 })
            harness.clock.advance(by: .seconds(300))
            try expectSSOServiceError(
                try await client.ssoServiceToken(credentials, device: "tv", link: code),
                status: .badRequest,
                code: "header_invalid",
                action: "check_headers"
            )
            // An unknown code is refused alike.
            try expectSSOServiceError(
                try await client.ssoServiceToken(credentials, device: "tv", link: "000000"),
                status: .badRequest,
                code: "header_invalid",
                action: "check_headers"
            )
        }
    }

    @Test func linkCodeLifetimesOutsideAdobesRangeAreRefused() {
        var settings = SSOServiceSettings()
        #expect(settings.problem == nil)
        #expect(settings.linkCodeTTL == 1800)
        for invalid: Int64 in [299, 1801] {
            settings.linkCodeTTL = invalid
            #expect(settings.problem != nil, "\(invalid)")
        }
    }

    @Test func theSSOConfigSectionSetsTheService() throws {
        let json = #"{"ssoService": {"tokenTTL": 600, "linkCodeTTL": 300, "fieldNames": "both"}}"#
        var configuration = SimulatorConfiguration()
        try JSONDecoder().decode(SSOConfigurationFile.self, from: Data(json.utf8)).apply(to: &configuration)
        #expect(configuration.ssoService.tokenTTL == 600)
        #expect(configuration.ssoService.linkCodeTTL == 300)
        #expect(configuration.ssoService.refreshWindow == SSOServiceSettings().refreshWindow)
        #expect(configuration.ssoService.fieldNames == .both)
        let tooLong = try JSONDecoder().decode(SSOConfigurationFile.self, from: Data(#"{"ssoService": {"linkCodeTTL": 3600}}"#.utf8))
        #expect(throws: SSOConfigurationError.self) { try tooLong.apply(to: &configuration) }
    }

    @Test func unlinkRemovesDevicesFromTheSingleSignOn() async throws {
        try await Harness(Self.quiet).run { client in
            let phone = try await client.credentials()
            let tv = try await client.credentials()
            let phoneToken = try await client.newSSOServiceToken(phone, device: "phone", ssoId: "alice")
            let code = try #require(try await client.ssoLink(phone, device: "phone", token: phoneToken).json()["code"] as? String)
            let tvToken = try #require(try await client.ssoServiceToken(tv, device: "tv", link: code).json()["serviceToken"] as? String)
            try await client.basicLogin(phone, device: "phone", headers: Client.serviceHeader(phoneToken))
            #expect(try await client.profiles(tv, device: "tv", headers: Client.serviceHeader(tvToken))["Cablevision"] != nil)

            let tvID = Data("tv".utf8).base64EncodedString()
            let reply = try await client.ssoUnlink(phone, device: "phone", token: phoneToken, devices: [tvID, "unknowndevice"])
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(body["status"] as? String == "OK")
            // Partial success: only the devices that were linked are named (Adobe's sample 2).
            #expect(body["unlinkedDevices"] as? [String] == [tvID])
            #expect((try await client.ssoList(phone, device: "phone", token: phoneToken).json()["devices"] as? [String: Any])?.isEmpty == true)

            // The TV's token no longer signs it on, and the service no longer knows it.
            #expect(try await client.profiles(tv, device: "tv", headers: Client.serviceHeader(tvToken)).isEmpty)
            try expectSSOServiceError(
                try await client.ssoList(tv, device: "tv", token: tvToken),
                status: .unauthorized,
                code: "header_invalid",
                action: "get_new_token"
            )

            for invalid in [#"{"devices":[]}"#, "{}"] {
                let refused = try await client.ssoUnlink(phone, device: "phone", token: phoneToken, body: invalid)
                try expectSSOServiceError(refused, status: .badRequest, code: "request_invalid", action: "check_request_body")
            }
            let unreadable = try await client.ssoUnlink(phone, device: "phone", token: phoneToken, body: "")
            try expectSSOServiceError(unreadable, status: .badRequest, code: "request_null", action: "none")
        }
    }

    @Test func aServiceTokenIsSingleSignOnForSessionsAndProfiles() async throws {
        try await Harness(Self.quiet).run { client in
            let firstApp = try await client.credentials()
            let secondApp = try await client.credentials()
            let first = try await client.newSSOServiceToken(firstApp, device: "phone", ssoId: "household-42")
            try await client.basicLogin(firstApp, device: "phone", headers: Client.serviceHeader(first))

            // The same common identifier on a second device: single sign-on there, no code.
            let second = try await client.newSSOServiceToken(secondApp, device: "tv", ssoId: "household-42")
            let profile = try #require(try await client.profiles(secondApp, device: "tv", headers: Client.serviceHeader(second))["Cablevision"])
            #expect(profile["type"] as? String == "serviceTokenSSO")
            #expect(profile["issuer"] as? String == "Cablevision")
            let session = try await client.form(
                .post,
                "/api/v2/REF30/sessions",
                headers: Client.authorized(secondApp, device: "tv").merging(Client.serviceHeader(second)),
                fields: Client.allSessionFields
            )
            #expect(session.status == .ok, "\(session.text)")
            #expect(try session.json()["actionName"] as? String == "authorize")
            #expect(try session.json()["reasonType"] as? String == "authenticatedSSO")
            let decision = try await client.authorizeDecision(secondApp, mvpd: "Cablevision", device: "tv", headers: Client.serviceHeader(second))
            #expect(decision.status == .ok, "\(decision.text)")

            // The token counts only on a device enrolled under its identifier.
            #expect(try await client.profiles(secondApp, device: "stranger", headers: Client.serviceHeader(second)).isEmpty)
            // Another identifier reaches nothing.
            let other = try await client.newSSOServiceToken(secondApp, device: "tv-2", ssoId: "household-7")
            #expect(try await client.profiles(secondApp, device: "tv-2", headers: Client.serviceHeader(other)).isEmpty)
        }
    }

    @Test func requestsWithoutWhatAdobeRequiresAreRefusedInTheServicesShape() async throws {
        try await Harness(Self.quiet).run { client in
            let credentials = try await client.credentials()
            let noSSOHeader = try await client.send(.post, "/api/REF30/serviceToken", headers: Client.authorized(credentials, device: "tv"))
            try expectSSOServiceError(noSSOHeader, status: .badRequest, code: "header_missing", action: "check_headers")
            #expect(
                (try noSSOHeader.json()["error"] as? [String: Any])?["message"] as? String
                    == "Either x-sso-id or x-sso-link header is required for POST requests"
            )
            let noDevice = try await client.ssoServiceToken(credentials, device: nil, ssoId: "alice")
            try expectSSOServiceError(noDevice, status: .badRequest, code: "header_missing", action: "check_headers")
            var badToken = Client.authorized(credentials, device: "tv")
            badToken[.authorization] = "Bearer nope"
            badToken[Client.name("X-SSO-ID")] = "alice"
            try expectSSOServiceError(
                try await client.send(.post, "/api/REF30/serviceToken", headers: badToken),
                status: .unauthorized,
                code: "unauthorized",
                action: "none"
            )
            let unknownProvider = try await client.send(
                .post,
                "/api/NOPE/serviceToken",
                headers: Client.authorized(credentials, device: "tv").merging([Client.name("X-SSO-ID"): "alice"])
            )
            try expectSSOServiceError(unknownProvider, status: .badRequest, code: "invalid_parameter_service_provider", action: "none")
            for path in ["/api/REF30/link", "/api/REF30/unlink"] {
                let reply = try await client.send(.post, path, headers: Client.authorized(credentials, device: "tv"))
                try expectSSOServiceError(reply, status: .unauthorized, code: "header_missing", action: "check_headers")
            }
            let list = try await client.send(.get, "/api/REF30/list", headers: Client.authorized(credentials, device: "tv"))
            try expectSSOServiceError(list, status: .unauthorized, code: "header_missing", action: "check_headers")
            // A REST v2 service token (the lab issuer's RS256) is not the SSO Service's.
            let foreign = try await client.serviceToken(sub: "alice")
            try expectSSOServiceError(
                try await client.ssoLink(credentials, device: "tv", token: foreign),
                status: .unauthorized,
                code: "header_invalid",
                action: "get_new_token"
            )
            #expect(try await client.send(.get, "/api/REF30/link", headers: Client.authorized(credentials, device: "tv")).status == .methodNotAllowed)
        }
    }

    @Test func devicesLinkCodesAndTheKeySurviveARestart() async throws {
        try await StateFileTests.withStatePath { path in
            let clock = ManualClock()
            let saved = Mutex<(Credentials, String, String)?>(nil)
            try await StateFileTests.harness(path, clock: clock, Self.quiet).run { client in
                let credentials = try await client.credentials()
                let token = try await client.newSSOServiceToken(credentials, device: "phone", ssoId: "alice")
                let code = try #require(try await client.ssoLink(credentials, device: "phone", token: token).json()["code"] as? String)
                saved.withLock { $0 = (credentials, token, code) }
            }
            let (credentials, token, code) = try #require(saved.withLock { $0 })
            clock.advance(by: .seconds(60))
            try await StateFileTests.harness(path, clock: clock, Self.quiet).run { client in
                // The code still joins a device, and the token issued before the restart still verifies.
                #expect(try await client.ssoServiceToken(credentials, device: "tv", link: code).status == .created)
                let devices = try await client.ssoList(credentials, device: "phone", token: token)
                #expect(devices.status == .ok, "\(devices.text)")
                #expect((try devices.json()["devices"] as? [String: Any])?.keys.sorted() == [Data("tv".utf8).base64EncodedString()])
            }
        }
    }

    @Test func theRoutesAreFaultInjectedAndThrottled() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await FaultTests.putFaults(client, #"{"other":{"tokenExpiry":1}}"#)
            let expired = try await client.ssoServiceToken(credentials, device: "tv", ssoId: "alice")
            try expectSSOServiceError(expired, status: .unauthorized, code: "unauthorized", action: "none")
            try await FaultTests.putFaults(client, "{}")
            var statuses: [Int] = []
            for _ in 0..<12 {
                statuses.append(try await client.ssoServiceToken(credentials, device: "busy", ssoId: "alice").status.code)
            }
            #expect(statuses == Array(repeating: 201, count: 11) + [429])
        }
    }
}

/// Checks an SSO Service error: its HTTP status and the page's structure
/// (`{"status": "BAD_REQUEST", "error": {status, code, message, action, helpUrl, trace}}`).
func expectSSOServiceError(
    _ reply: Reply,
    status: HTTPResponse.Status,
    code: String,
    action: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(reply.status == status, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(reply.contentType.hasPrefix("application/json"), sourceLocation: sourceLocation)
    let body = try reply.json()
    let names: [Int: String] = [400: "BAD_REQUEST", 401: "UNAUTHORIZED", 500: "INTERNAL_SERVER_ERROR"]
    #expect(body["status"] as? String == names[Int(status.code)], "body: \(reply.text)", sourceLocation: sourceLocation)
    let error = try #require(body["error"] as? [String: Any], "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(Set(error.keys) == ["status", "code", "message", "action", "helpUrl", "trace"], sourceLocation: sourceLocation)
    #expect(error["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
    #expect(error["code"] as? String == code, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect(error["action"] as? String == action, "body: \(reply.text)", sourceLocation: sourceLocation)
    #expect((error["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
}

extension Client {
    /// `POST /api/REF30/serviceToken` from `device` with `X-SSO-ID` or `X-SSO-LINK`.
    func ssoServiceToken(
        _ credentials: Credentials,
        device: String?,
        ssoId: String? = nil,
        link: String? = nil,
        deviceInfo: String = Client.deviceInfo
    ) async throws -> Reply {
        var headers = Self.authorized(credentials, device: device, deviceInfo: deviceInfo)
        if let ssoId { headers[Self.name("X-SSO-ID")] = ssoId }
        if let link { headers[Self.name("X-SSO-LINK")] = link }
        return try await self.send(.post, "/api/REF30/serviceToken", headers: headers)
    }

    /// A new service token for `ssoId` on `device`, checking it was issued.
    func newSSOServiceToken(
        _ credentials: Credentials,
        device: String,
        ssoId: String,
        deviceInfo: String = Client.deviceInfo
    ) async throws -> String {
        let reply = try await self.ssoServiceToken(credentials, device: device, ssoId: ssoId, deviceInfo: deviceInfo)
        #expect(reply.status == .created, "\(reply.text)")
        return try #require(try reply.json()["serviceToken"] as? String, "\(reply.text)")
    }

    /// `GET /api/REF30/serviceToken` with `AD-Service-Token` (the page names no device header).
    func refreshSSOServiceToken(_ credentials: Credentials, token: String) async throws -> Reply {
        try await self.send(.get, "/api/REF30/serviceToken", headers: Self.authorized(credentials, device: nil).merging(Self.serviceHeader(token)))
    }

    func ssoLink(_ credentials: Credentials, device: String, token: String) async throws -> Reply {
        try await self.send(.post, "/api/REF30/link", headers: Self.authorized(credentials, device: device).merging(Self.serviceHeader(token)))
    }

    func ssoList(_ credentials: Credentials, device: String, token: String) async throws -> Reply {
        try await self.send(.get, "/api/REF30/list", headers: Self.authorized(credentials, device: device).merging(Self.serviceHeader(token)))
    }

    func ssoUnlink(_ credentials: Credentials, device: String, token: String, devices: [String]) async throws -> Reply {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["devices": devices]), as: UTF8.self)
        return try await self.ssoUnlink(credentials, device: device, token: token, body: body)
    }

    func ssoUnlink(_ credentials: Credentials, device: String, token: String, body: String) async throws -> Reply {
        try await self.jsonPost("/api/REF30/unlink", body, headers: Self.authorized(credentials, device: device).merging(Self.serviceHeader(token)))
    }

    /// Part `index` (0 header, 1 payload) of a compact JWS, decoded.
    static func jwtPart(_ token: String, _ index: Int) throws -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        var text = parts[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
