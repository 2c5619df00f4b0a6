import Foundation
import Hummingbird
import PassSimulator
import Synchronization
import Testing

@Suite("DCR /o/client")
struct DCRTests {
    @Test func registerThenTokenHappyPath() async throws {
        let harness = Harness()
        let now = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let registration = try await client.register()
            #expect(registration.status == .created)
            let body = try registration.json()
            let clientId = try #require(body["client_id"] as? String)
            let clientSecret = try #require(body["client_secret"] as? String)
            #expect(!clientId.isEmpty && !clientSecret.isEmpty && clientId != clientSecret)
            #expect(body["redirect_uris"] as? [String] == ["adobepass://com.example"])
            #expect(body["grant_types"] as? [String] == ["client_credentials"])
            #expect(body["scopes"] as? [String] == ["api:client:v2"])
            #expect(body["client_id_issued_at"] as? Int == Int(now / 1000))
            #expect(Set(body.keys) == ["client_id", "client_secret", "redirect_uris", "grant_types", "scopes", "client_id_issued_at"])

            let token = try await client.token("client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials")
            #expect(token.status == .created)
            let grant = try token.json()
            #expect((grant["id"] as? String)?.isEmpty == false)
            #expect((grant["access_token"] as? String)?.count ?? 0 >= 20)
            #expect(grant["created_at"] as? Int64 == now)
            #expect(grant["expires_in"] as? Int == 21_600)
            #expect(grant["token_type"] as? String == "bearer")
        }
    }

    @Test func tokenAcceptsQueryParametersAndConfiguredTTL() async throws {
        let harness = Harness { $0.accessTokenTTL = .seconds(3600) }
        try await harness.run { client in
            let registration = try await client.register().json()
            let clientId = try #require(registration["client_id"] as? String)
            let clientSecret = try #require(registration["client_secret"] as? String)
            let token = try await client.form(
                .post,
                "/o/client/token?client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials",
                headers: Client.dcrHeaders
            )
            #expect(token.status == .created)
            #expect(try token.json()["expires_in"] as? Int == 3600)
        }
    }

    @Test func registerWithoutRedirectURIEchoesNone() async throws {
        try await Harness().run { client in
            let reply = try await client.jsonPost(
                "/o/client/register",
                #"{"software_statement":"\#(Client.softwareStatement)"}"#,
                headers: Client.dcrHeaders
            )
            #expect(reply.status == .created)
            #expect(try reply.json()["redirect_uris"] as? [String] == [])
        }
    }

    @Test(
        "register rejects malformed requests with invalid_request",
        arguments: [
            ("application/json", "{not json"),
            ("application/json", #"{"redirect_uri":"app://x"}"#),
            ("application/json", ""),
            ("application/x-www-form-urlencoded", "software_statement=\(Client.softwareStatement)"),
        ]
    )
    func registerInvalidRequest(contentType: String, body: String) async throws {
        try await Harness().run { client in
            var headers = Client.dcrHeaders
            headers[.contentType] = contentType
            let reply = try await client.send(.post, "/o/client/register", headers: headers, body: body)
            try expectDCRError(reply, "invalid_request")
        }
    }

    @Test(
        "register rejects statements that are not JWTs carrying a software_id",
        arguments: [
            "not-a-jwt",
            "a.b",
            Client.jwt(payload: #"{"client_name":"no software id"}"#),
            Client.jwt(payload: #"{"software_id":42}"#),
            Client.jwt(payload: #"["software_id"]"#),
            Client.jwt(payload: "plain text"),
            "eyJhbGciOiJSUzI1NiJ9.@@@@.c2ln",
        ]
    )
    func registerInvalidSoftwareStatement(statement: String) async throws {
        try await Harness().run { client in
            try expectDCRError(try await client.register(statement: statement), "invalid_software_statement")
        }
    }

    @Test func tokenErrors() async throws {
        try await Harness().run { client in
            let registration = try await client.register().json()
            let clientId = try #require(registration["client_id"] as? String)
            let clientSecret = try #require(registration["client_secret"] as? String)

            try expectDCRError(
                try await client.token("client_id=\(clientId)&grant_type=client_credentials"),
                "invalid_request"
            )
            try expectDCRError(try await client.token(""), "invalid_request")
            try expectDCRError(
                try await client.token("client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=authorization_code"),
                "unsupported_grant_type"
            )
            try expectDCRError(
                try await client.token("client_id=\(clientId)&client_secret=wrong&grant_type=client_credentials"),
                "invalid_client"
            )
            try expectDCRError(
                try await client.token("client_id=nobody&client_secret=\(clientSecret)&grant_type=client_credentials"),
                "invalid_client"
            )
        }
    }
}

@Suite("Logging")
struct LoggingTests {
    @Test func secretsNeverReachTheLogs() async throws {
        let capture = LogCapture()
        let harness = Harness(logger: capture.logger)
        let statement = Client.softwareStatement
        let collected = Mutex<[String]>([statement])
        try await harness.run { client in
            let credentials = try await client.credentials()
            collected.withLock { $0 += [credentials.clientSecret, credentials.accessToken] }
            // Credentials in the query string must not leak through request logging either.
            let viaQuery = try await client.form(
                .post,
                "/o/client/token?client_id=\(credentials.clientId)&client_secret=\(credentials.clientSecret)&grant_type=client_credentials",
                headers: Client.dcrHeaders
            )
            let queryToken = try #require(try viaQuery.json()["access_token"] as? String)
            collected.withLock { $0.append(queryToken) }
            let code = try await client.newCode(credentials)
            _ = try await client.poll(credentials, code: code)
            _ = try await client.approve(#"{"code":"\#(code)"}"#)
            _ = try await client.poll(credentials, code: code)
            _ = try await client.send(.get, "/api/v2/REF30/configuration", headers: [.authorization: "Bearer wrong-\(credentials.accessToken)"])
        }
        let lines = capture.all
        #expect(lines.contains { $0.contains("code issued") })
        #expect(lines.contains { $0.contains("http.path") })
        for secret in collected.withLock({ $0 }) {
            #expect(!lines.contains { $0.contains(secret) }, "a secret was logged")
        }
    }
}
