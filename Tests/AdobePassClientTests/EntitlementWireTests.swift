import AdobePassClient
import Foundation
import Hummingbird
import RegcodeEngine
import Testing

/// Exact requests on the wire for authorization, preauthorization, metadata, profile and logout calls.
@Suite("AdobePassClient entitlement wire format")
struct EntitlementWireTests {
    static let deviceIDParameter = "YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi"
    static let keys = SigningKeys(publicKey: "samplePublicKey", secret: "sampleSecretKey")

    /// Answers every path with a body of the right shape.
    static func server() -> CaptureServer {
        CaptureServer { request in
            let path = request.path
            if path.contains("/decisions/") {
                return CaptureServer.json(
                    .ok,
                    #"{"decisions":[{"resource":"Live","authorized":true,"token":{"serializedToken":"tok","notAfter":5},"notAfter":9}]}"#
                )
            }
            if path.contains("/logout") {
                return path.hasPrefix("/api/v1") ? Response(status: .noContent) : CaptureServer.json(.ok, #"{"logouts":{}}"#)
            }
            switch path {
            case "/api/v1/checkauthn": return Response(status: .ok)
            case "/api/v1/authorize": return CaptureServer.json(.ok, #"{"mvpd":"Cablevision","resource":"Live","expires":"9"}"#)
            case "/api/v1/tokens/media": return CaptureServer.json(.ok, #"{"resource":"Live","expires":"5","serializedToken":"tok"}"#)
            case "/api/v1/preauthorize": return CaptureServer.json(.ok, #"{"resources":[{"id":"Live","authorized":true}]}"#)
            case "/api/v1/tokens/usermetadata": return CaptureServer.json(.ok, #"{"updated":1,"encrypted":[],"data":{"zip":"1"}}"#)
            case "/api/v1/tokens/authn": return CaptureServer.json(.ok, #"{"mvpd":"Cablevision","userId":"u","expires":"9"}"#)
            default:
                return CaptureServer.json(
                    .ok,
                    #"{"profiles":{"Cablevision":{"notBefore":1,"notAfter":9,"type":"regular","attributes":{"zip":{"value":"1","state":"plain"}}}}}"#
                )
            }
        }
    }

    @Test func v2CallsCarryTheV2HeadersAndBodies() async throws {
        let server = Self.server()
        let context = Fixtures.context(accessToken: "tok.en", visitorID: "ecid-1")
        let results = try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            var results: [Result<BackendResponse, BackendFailure>] = []
            for request: BackendRequest in [
                .authorize(mvpd: "Cable Co", resource: "Live"),
                .mediaToken(mvpd: "Cable Co", resource: "Live"),
                .preauthorize(mvpd: "Cable Co", resources: ["Live", "a/b"]),
                .checkAuthentication,
                .fetchProfile(mvpd: "Cablevision"),
                .userMetadata(mvpd: "Cablevision"),
                .logout(mvpd: "Cable Co"),
            ] {
                results.append(await client.execute(request, context: context))
            }
            return results
        }
        let token = MediaToken(resource: "Live", serializedToken: "tok", expiresEpochMs: 5)
        #expect(
            results == [
                .success(.authorization(AuthorizationDecision(resource: "Live", authorized: true, expiresEpochMs: 9, token: token))),
                .success(.mediaToken(token)),
                .success(.preauthorization([AuthorizationDecision(resource: "Live", authorized: true, expiresEpochMs: 9, token: token)])),
                .success(.authenticationStatus(true)),
                .success(.profile(AuthProfile(mvpd: "Cablevision", userID: nil, expiresEpochMs: 9))),
                .success(.userMetadata(UserMetadata(values: ["zip": "1"]))),
                .success(.logoutInstructions([])),
            ]
        )
        let requests = server.requests
        #expect(requests.map(\.method) == ["POST", "POST", "POST", "GET", "GET", "GET", "GET"])
        #expect(
            requests.map(\.target) == [
                "/api/v2/REF30/decisions/authorize/Cable%20Co",
                "/api/v2/REF30/decisions/authorize/Cable%20Co",
                "/api/v2/REF30/decisions/preauthorize/Cable%20Co",
                "/api/v2/REF30/profiles",
                "/api/v2/REF30/profiles/Cablevision",
                "/api/v2/REF30/profiles/Cablevision",
                "/api/v2/REF30/logout/Cable%20Co?redirectUrl=https%3A%2F%2Fadobe.com",
            ]
        )
        #expect(requests[0].body == #"{"resources":["Live"]}"#)
        #expect(requests[2].body == #"{"resources":["Live","a/b"]}"#)
        #expect(requests.prefix(3).allSatisfy { $0.values("Content-Type") == ["application/json"] })
        for request in requests {
            #expect(request.values("Authorization") == ["Bearer tok.en"])
            #expect(request.values("AP-Device-Identifier") == ["fingerprint \(Self.deviceIDParameter)"])
            #expect(request.values("X-Device-Info") == [Fixtures.deviceInfo])
            #expect(request.values("AP-Visitor-Identifier") == ["ecid-1"])
        }
    }

    @Test func v1CallsAreSignedDeviceCallsWithTheirParameters() async throws {
        let server = Self.server()
        let context = Fixtures.context(profile: .v1, signingKeys: Self.keys)
        let results = try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            var results: [Result<BackendResponse, BackendFailure>] = []
            for request: BackendRequest in [
                .checkAuthentication,
                .fetchProfile(mvpd: "Cablevision"),
                .authorize(mvpd: "Cablevision", resource: "Live"),
                .mediaToken(mvpd: "Cablevision", resource: "Live"),
                .preauthorize(mvpd: "Cablevision", resources: ["Live", "Movies"]),
                .userMetadata(mvpd: "Cablevision"),
                .logout(mvpd: "Cablevision"),
            ] {
                results.append(await client.execute(request, context: context))
            }
            return results
        }
        #expect(
            results == [
                .success(.authenticationStatus(true)),
                .success(.profile(AuthProfile(mvpd: "Cablevision", userID: "u", expiresEpochMs: 9))),
                .success(.authorization(AuthorizationDecision(resource: "Live", authorized: true, expiresEpochMs: 9))),
                .success(.mediaToken(MediaToken(resource: "Live", serializedToken: "tok", expiresEpochMs: 5))),
                .success(.preauthorization([AuthorizationDecision(resource: "Live", authorized: true)])),
                .success(.userMetadata(UserMetadata(values: ["zip": "1"]))),
                .success(.loggedOut),
            ]
        )
        let device = "requestor=REF30&deviceId=\(Self.deviceIDParameter)"
        let requests = server.requests
        #expect(requests.map(\.method) == ["GET", "GET", "GET", "GET", "GET", "GET", "DELETE"])
        #expect(
            requests.map(\.target) == [
                "/api/v1/checkauthn?\(device)&format=json",
                "/api/v1/tokens/authn?\(device)&format=json",
                "/api/v1/authorize?\(device)&resource=Live&format=json",
                "/api/v1/tokens/media?\(device)&resource=Live&format=json",
                "/api/v1/preauthorize?\(device)&resource=Live%2CMovies&format=json",
                "/api/v1/tokens/usermetadata?\(device)&format=json",
                "/api/v1/logout?\(device)&format=json",
            ]
        )
        for request in requests {
            let header = try #require(request.header("Authorization"))
            let signed = try SignedHeader(header)
            #expect(signed.method == request.method)
            #expect(signed.fields["request_uri"] == request.path)
            #expect(signed.fields["requestor_id"] == "REF30")
            let expected = AdobeRequestSigner.authorizationHeader(
                method: request.method,
                requestor: "REF30",
                requestURI: request.path,
                publicKey: Self.keys.publicKey,
                secret: Self.keys.secret,
                nonce: signed.nonce,
                requestTime: signed.requestTime
            )
            #expect(header == expected)
            #expect(request.values("Accept") == ["application/json"])
        }
    }

    @Test(arguments: [
        (V1SignatureFault.requestTimeInSeconds, Int64(-1)),
        (V1SignatureFault.requestTimeOffset(.seconds(-3600)), Int64(-3_600_000)),
    ])
    func signatureFaultsForFaultTests(fault: V1SignatureFault, expectedOffset: Int64) async throws {
        let server = Self.server()
        try await server.run { baseURL in
            let client = AdobePassClient(
                configuration: AdobePassClientConfiguration(baseURL: baseURL, signatureFault: fault),
                logger: Fixtures.quietLogger
            )
            _ = await client.execute(.checkAuthentication, context: Fixtures.context(profile: .v1, signingKeys: Self.keys))
        }
        let now = Fixtures.nowMs
        let signed = try SignedHeader(try #require(server.requests.first?.header("Authorization")))
        if expectedOffset == -1 {
            #expect(abs(signed.requestTime - now / 1000) <= 5)
        } else {
            #expect(abs(signed.requestTime - (now + expectedOffset)) <= 5_000)
        }
        // Still a well-formed, correctly computed signature over what it claims: only the time is wrong.
        let header = try #require(server.requests.first?.header("Authorization"))
        #expect(
            header
                == AdobeRequestSigner.authorizationHeader(
                    method: "GET",
                    requestor: "REF30",
                    requestURI: "/api/v1/checkauthn",
                    publicKey: Self.keys.publicKey,
                    secret: Self.keys.secret,
                    nonce: signed.nonce,
                    requestTime: signed.requestTime
                )
        )
    }
}

extension AdobeRequestSigner {
    /// The deterministic overload with the parsed header's fields.
    static func authorizationHeader(
        method: String,
        requestor: String,
        requestURI: String,
        publicKey: String,
        secret: String,
        nonce: String,
        requestTime: Int64
    ) -> String {
        authorizationHeader(
            method: method,
            requestor: requestor,
            requestURI: requestURI,
            publicKey: publicKey,
            secret: secret,
            nonce: nonce,
            requestTimeMs: requestTime
        )
    }
}
