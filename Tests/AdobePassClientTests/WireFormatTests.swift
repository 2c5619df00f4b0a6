import AdobePassClient
import Foundation
import Hummingbird
import InMemoryLogging
import Logging
import RegcodeEngine
import Testing

/// Exact requests on the wire and transport failures, against a scripted loopback server.
@Suite("AdobePassClient wire format")
struct WireFormatTests {
    static let sessionJSON = #"{"actionName":"authenticate","code":"8ER640M","mvpd":"Cable Co","notAfter":"1733737089035"}"#

    @Test func v2SessionRequestCarriesTheHeadersAndAnEncodedForm() async throws {
        let server = CaptureServer { _ in CaptureServer.json(.ok, Self.sessionJSON) }
        let result = try await server.run { baseURL in
            await Fixtures.client(baseURL: baseURL + "/").execute(
                .createSession(mvpd: "Cable Co"),
                context: Fixtures.context(requestor: "REF 30/x", accessToken: "tok.en", visitorID: "ecid-1")
            )
        }
        #expect(result == .success(.session(IssuedCode(code: "8ER640M", expiresEpochMs: 1_733_737_089_035, mvpd: "Cable Co"))))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.target == "/api/v2/REF%2030%2Fx/sessions")
        #expect(request.values("Authorization") == ["Bearer tok.en"])
        #expect(request.values("AP-Device-Identifier") == ["fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi"])
        #expect(request.values("X-Device-Info") == [Fixtures.deviceInfo])
        #expect(request.values("Accept") == ["application/json"])
        #expect(request.values("User-Agent") == ["AppleTV11,1 tvOS/17.0 AccessEnabler/3.7.1 regcoded"])
        #expect(request.values("AP-Visitor-Identifier") == ["ecid-1"])
        #expect(request.values("Content-Type") == ["application/x-www-form-urlencoded"])
        #expect(request.body == "mvpd=Cable%20Co&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com")
    }

    @Test func v2PollAndConfigurationPaths() async throws {
        let server = CaptureServer { request in
            request.path.hasSuffix("/configuration")
                ? CaptureServer.json(.ok, #"{"requestor":{"mvpds":[]}}"#)
                : CaptureServer.json(.ok, #"{"profiles":{}}"#)
        }
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Fixtures.context(accessToken: "t")
            #expect(await client.execute(.pollProfile(code: "../AB?C"), context: context) == .success(.profile(nil)))
            #expect(await client.execute(.configuration, context: context) == .success(.configuration(mvpds: [])))
        }
        let requests = server.requests
        #expect(requests.map(\.method) == ["GET", "GET"])
        #expect(requests.map(\.target) == ["/api/v2/REF30/profiles/code/..%2FAB%3FC", "/api/v2/REF30/configuration"])
        #expect(requests.allSatisfy { $0.values("AP-Visitor-Identifier").isEmpty && $0.body.isEmpty })
    }

    @Test func dcrRequests() async throws {
        let server = CaptureServer { request in
            request.path == "/o/client/register"
                ? CaptureServer.json(.created, #"{"client_id":"cid","client_secret":"csecret"}"#)
                : CaptureServer.json(.ok, #"{"access_token":"at","expires_in":3600,"token_type":"bearer"}"#)
        }
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Fixtures.context(accessToken: "must-not-be-sent")
            #expect(
                await client.execute(.registerClient(softwareStatement: "a.b.c"), context: context)
                    == .success(.registered(ClientCredentials(clientID: "cid", clientSecret: "csecret")))
            )
            #expect(
                await client.execute(.obtainAccessToken(ClientCredentials(clientID: "c i+d", clientSecret: "s&=cret")), context: context)
                    == .success(.accessToken(token: "at", expiresIn: .seconds(3600)))
            )
        }
        let requests = server.requests
        #expect(requests.count == 2)
        let register = try #require(requests.first)
        #expect(register.method == "POST")
        #expect(register.target == "/o/client/register")
        #expect(register.values("Content-Type") == ["application/json;charset=utf-8"])
        #expect(register.values("X-Device-Info") == [Fixtures.deviceInfo])
        // dcrApi.json lists no Accept for the DCR calls.
        #expect(register.values("Accept").isEmpty)
        let json = try JSONSerialization.jsonObject(with: Data(register.body.utf8)) as? [String: String]
        #expect(json == ["software_statement": "a.b.c", "redirect_uri": "adobepass://ios.app"])

        let token = try #require(requests.last)
        #expect(token.target == "/o/client/token")
        #expect(token.values("Content-Type") == ["application/x-www-form-urlencoded"])
        #expect(token.body == "client_id=c%20i%2Bd&client_secret=s%26%3Dcret&grant_type=client_credentials")
        #expect(requests.allSatisfy { $0.values("Authorization").isEmpty && $0.values("AP-Device-Identifier").isEmpty })
    }

    @Test func malformedSuccessBodyFromTheServer() async throws {
        let server = CaptureServer { _ in
            Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>maintenance</html>")))
        }
        let result = try await server.run { baseURL in
            await Fixtures.client(baseURL: baseURL).execute(.configuration, context: Fixtures.context(accessToken: "t"))
        }
        guard case .failure(.malformed(200, _)) = result else {
            Issue.record("expected .malformed(200), got \(result)")
            return
        }
    }

    @Test func retryAfterHeaderIsParsed() async throws {
        let server = CaptureServer { _ in
            var response = CaptureServer.json(.serviceUnavailable, #"{"status":503,"code":"internal_server_error","action":"retry"}"#)
            response.headers[.retryAfter] = "12"
            return response
        }
        let result = try await server.run { baseURL in
            await Fixtures.client(baseURL: baseURL).execute(.pollProfile(code: "ABC"), context: Fixtures.context(accessToken: "t"))
        }
        #expect(
            result
                == .failure(
                    .http(status: 503, retryAfter: .seconds(12), error: EnhancedError(status: 503, code: "internal_server_error", action: "retry"))
                )
        )
    }

    @Test func oversizedBodyIsNotRead() async throws {
        let server = CaptureServer { _ in
            CaptureServer.json(.ok, #"{"profiles":{},"padding":""# + "\"" + String(repeating: "x", count: 4096) + "\"}")
        }
        let result = try await server.run { baseURL in
            let client = AdobePassClient(
                configuration: AdobePassClientConfiguration(baseURL: baseURL, maxResponseBodyBytes: 1024),
                logger: .init(label: "test")
            )
            return await client.execute(.pollProfile(code: "ABC"), context: Fixtures.context(accessToken: "t"))
        }
        guard case .failure(.malformed(200, let reason)) = result else {
            Issue.record("expected .malformed(200), got \(result)")
            return
        }
        #expect(reason.contains("1024"))
    }

    @Test func slowResponseHeadTimesOut() async throws {
        let server = CaptureServer { _ in
            try await Task.sleep(for: .seconds(2))
            return CaptureServer.json(.ok, #"{"profiles":{}}"#)
        }
        // Only the call is timed: server start-up and shutdown are not the client's business.
        let (result, elapsed) = try await server.run { baseURL in
            let clock = ContinuousClock()
            let start = clock.now
            let result = await Fixtures.client(baseURL: baseURL, requestTimeout: .milliseconds(300))
                .execute(.pollProfile(code: "ABC"), context: Fixtures.context(accessToken: "t"))
            return (result, start.duration(to: clock.now))
        }
        guard case .failure(.transport(let description, _)) = result else {
            Issue.record("expected .transport, got \(result)")
            return
        }
        #expect(description.contains("timeout"))
        #expect(elapsed < .seconds(2))
    }

    @Test func stalledBodyTimesOut() async throws {
        let server = CaptureServer { _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"profiles":"#))
                    try await Task.sleep(for: .seconds(2))
                    try await writer.write(ByteBuffer(string: "{}}"))
                    try await writer.finish(nil)
                }
            )
        }
        // Only the call is timed: server start-up and shutdown are not the client's business.
        let (result, elapsed) = try await server.run { baseURL in
            let clock = ContinuousClock()
            let start = clock.now
            let result = await Fixtures.client(baseURL: baseURL, requestTimeout: .milliseconds(300))
                .execute(.pollProfile(code: "ABC"), context: Fixtures.context(accessToken: "t"))
            return (result, start.duration(to: clock.now))
        }
        guard case .failure(.transport(let description, _)) = result else {
            Issue.record("expected .transport, got \(result)")
            return
        }
        #expect(description.contains("timeout"))
        #expect(elapsed < .seconds(2))
    }

    @Test func connectionDroppedMidBodyIsATransportFailure() async throws {
        struct Dropped: Error {}
        let server = CaptureServer { _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json", .contentLength: "100"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"profiles":"#))
                    throw Dropped()
                }
            )
        }
        let result = try await server.run { baseURL in
            await Fixtures.client(baseURL: baseURL).execute(.pollProfile(code: "ABC"), context: Fixtures.context(accessToken: "t"))
        }
        guard case .failure(.transport) = result else {
            Issue.record("expected .transport, got \(result)")
            return
        }
    }

    // MARK: v1

    @Test func v1RegcodeIsSignedWhenNoBearerTokenIsHeld() async throws {
        let server = CaptureServer { _ in
            CaptureServer.json(
                .created,
                #"{"id":"ef5a","code":"IYQD5JQ","requestor":"REF30","mvpd":"DTV","generated":1704963921144,"expires":1704965721144}"#
            )
        }
        let keys = SigningKeys(publicKey: "samplePublicKey", secret: "sampleSecretKey")
        let result = try await server.run { baseURL in
            await Fixtures.client(baseURL: baseURL).execute(
                .createSession(mvpd: "DTV"),
                context: Fixtures.context(profile: .v1, signingKeys: keys)
            )
        }
        #expect(result == .success(.session(IssuedCode(code: "IYQD5JQ", expiresEpochMs: 1_704_965_721_144, mvpd: "DTV"))))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.target == "/reggie/v1/REF30/regcode")
        #expect(request.values("Content-Type") == ["application/x-www-form-urlencoded"])
        #expect(request.values("X-Device-Info") == [Fixtures.deviceInfo])
        #expect(request.values("Accept") == ["application/json"])
        // No ttl unless configured: the backend's default (pass-sim's --code-ttl) applies.
        #expect(request.body == "deviceId=YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi&format=json&mvpd=DTV")

        let authorization = try #require(request.header("Authorization"))
        let signed = try SignedHeader(authorization)
        #expect(signed.method == "POST")
        #expect(signed.fields["requestor_id"] == "REF30")
        #expect(signed.fields["request_uri"] == "/reggie/v1/REF30/regcode")
        #expect(signed.fields["public_key"] == "samplePublicKey")
        let expected = AdobeRequestSigner.authorizationHeader(
            method: "POST",
            requestor: "REF30",
            requestURI: "/reggie/v1/REF30/regcode",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey",
            nonce: signed.nonce,
            requestTimeMs: signed.requestTime
        )
        #expect(authorization == expected)
        #expect(!authorization.contains("sampleSecretKey"))
    }

    @Test func v1PollUsesTokensAuthnWithBearerToken() async throws {
        let server = CaptureServer { request in
            request.path == "/api/v1/tokens/authn"
                ? CaptureServer.json(.notFound, #"{"status":404,"message":"Not Found"}"#)
                : CaptureServer.json(.ok, #"{"requestor":{"id":"REF30","mvpds":[{"id":"DTV","displayName":"DIRECTV"}]}}"#)
        }
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL)
            let context = Fixtures.context(
                profile: .v1,
                accessToken: "bearer-wins",
                signingKeys: SigningKeys(publicKey: "p", secret: "s")
            )
            #expect(await client.execute(.pollProfile(code: "IYQD5JQ"), context: context) == .success(.profile(nil)))
            #expect(
                await client.execute(.configuration, context: context)
                    == .success(.configuration(mvpds: [MVPD(id: "DTV", displayName: "DIRECTV")]))
            )
        }
        let requests = server.requests
        #expect(requests.map(\.method) == ["GET", "GET"])
        #expect(
            requests.first?.target == "/api/v1/tokens/authn?requestor=REF30&deviceId=YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi&format=json"
        )
        #expect(requests.last?.target == "/api/v1/config/REF30?format=json")
        #expect(requests.allSatisfy { $0.values("Authorization") == ["Bearer bearer-wins"] })
    }

    // MARK: Logging

    @Test func logsCarryTheRequestMetadataButNoSecrets() async throws {
        let server = CaptureServer { request in
            switch request.path {
            case "/o/client/register": CaptureServer.json(.created, #"{"client_id":"cid","client_secret":"secret-value-1"}"#)
            case "/o/client/token": CaptureServer.json(.created, #"{"access_token":"token-value-2","expires_in":60}"#)
            default: CaptureServer.json(.unauthorized, #"{"status":401,"code":"invalid_access_token_client_application"}"#)
            }
        }
        let capture = InMemoryLogHandler()
        let logger = Self.traceLogger(capture)
        try await server.run { baseURL in
            let client = Fixtures.client(baseURL: baseURL, logger: logger)
            let keys = SigningKeys(publicKey: "public-value-3", secret: "hmac-secret-4")
            _ = await client.execute(.registerClient(softwareStatement: "statement-value-5"), context: Fixtures.context())
            _ = await client.execute(
                .obtainAccessToken(ClientCredentials(clientID: "cid", clientSecret: "secret-value-1")),
                context: Fixtures.context()
            )
            _ = await client.execute(.configuration, context: Fixtures.context(accessToken: "token-value-2"))
            _ = await client.execute(.createSession(mvpd: nil), context: Fixtures.context(profile: .v1, signingKeys: keys))
        }
        let records = capture.entries
        let finished = records.filter { $0.metadata["http.status"] != nil }
        #expect(finished.count == 4)
        #expect(finished.allSatisfy { $0.metadata["latency_ms"] != nil && $0.metadata["request.name"] != nil })
        #expect(finished.map { $0.metadata["request.name"].map { "\($0)" } } == ["register", "token", "configuration", "sessions"])
        #expect(records.allSatisfy { $0.level <= .debug })
        let everything = records.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        for secret in ["secret-value-1", "token-value-2", "hmac-secret-4", "statement-value-5", "signature="] {
            #expect(!everything.contains(secret), "log output contains \(secret)")
        }
    }

    static func traceLogger(_ handler: InMemoryLogHandler) -> Logger {
        var logger = Logger(label: "capture") { _ in handler }
        logger.logLevel = .trace
        return logger
    }
}
