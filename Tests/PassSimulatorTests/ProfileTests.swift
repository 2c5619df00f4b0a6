import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("REST v2 authorization and profiles")
struct ProfileTests {
    @Test(
        "protected endpoints answer 401 without a valid bearer token",
        arguments: [
            (HTTPRequest.Method.get, "/api/v2/REF30/configuration"),
            (.post, "/api/v2/REF30/sessions"),
            (.get, "/api/v2/REF30/sessions/ABCDEFG"),
            (.post, "/api/v2/REF30/sessions/ABCDEFG"),
            (.get, "/api/v2/REF30/profiles"),
            (.get, "/api/v2/REF30/profiles/Cablevision"),
            (.get, "/api/v2/REF30/profiles/code/ABCDEFG"),
        ]
    )
    func missingOrUnknownToken(method: HTTPRequest.Method, path: String) async throws {
        try await Harness().run { client in
            let device: HTTPFields = [Client.name("AP-Device-Identifier"): Client.fingerprint("d"), Client.name("X-Device-Info"): Client.deviceInfo]
            try expectEnhancedError(
                try await client.form(method, path, headers: device),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            var unknown = device
            unknown[.authorization] = "Bearer not-a-token"
            try expectEnhancedError(
                try await client.form(method, path, headers: unknown),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            var wrongScheme = device
            wrongScheme[.authorization] = "Basic dXNlcjpwYXNz"
            #expect(try await client.form(method, path, headers: wrongScheme).status == .unauthorized)
        }
    }

    @Test func expiredTokenIsRejectedAndARefreshedOneWorks() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let path = "/api/v2/REF30/configuration"
            harness.clock.advance(by: .seconds(21_599))
            #expect(try await client.send(.get, path, headers: Client.authorized(credentials)).status == .ok)
            harness.clock.advance(by: .seconds(1))
            try expectEnhancedError(
                try await client.send(.get, path, headers: Client.authorized(credentials)),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            let refreshed = try await client.token(
                "client_id=\(credentials.clientId)&client_secret=\(credentials.clientSecret)&grant_type=client_credentials"
            )
            let token = try #require(try refreshed.json()["access_token"] as? String)
            let renewed = Credentials(clientId: credentials.clientId, clientSecret: credentials.clientSecret, accessToken: token)
            let configuration = try await client.send(.get, path, headers: Client.authorized(renewed))
            #expect(configuration.status == .ok)
        }
    }

    @Test func adminCanExpireAClientsTokens() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let path = "/api/v2/REF30/configuration"
            #expect(try await client.send(.get, path, headers: Client.authorized(credentials)).status == .ok)
            let expired = try await client.jsonPost("/_sim/expire-tokens", #"{"clientId":"\#(credentials.clientId)"}"#)
            #expect(expired.status == .ok)
            #expect(try expired.json()["revoked"] as? Int == 1)
            try expectEnhancedError(
                try await client.send(.get, path, headers: Client.authorized(credentials)),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            #expect(try await client.jsonPost("/_sim/expire-tokens", #"{"clientId":"nobody"}"#).status == .notFound)
            #expect(try await client.jsonPost("/_sim/expire-tokens", "{}").status == .badRequest)
        }
    }

    @Test func pollIsEmptyUntilApprovedThenCarriesTheProfile() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)

            let pending = try await client.poll(credentials, code: code)
            #expect(pending.status == .ok)
            #expect((try pending.json()["profiles"] as? [String: Any])?.isEmpty == true)

            harness.clock.advance(by: .seconds(30))
            let approvedAt = harness.clock.epochMillisecondsNow
            let approval = try await client.approve(#"{"code":"\#(code)","userId":"alice"}"#)
            #expect(approval.status == .ok)
            let approvalBody = try approval.json()
            #expect(approvalBody["code"] as? String == code)
            #expect(approvalBody["mvpd"] as? String == "Cablevision")
            #expect(approvalBody["userId"] as? String == "alice")

            let done = try await client.poll(credentials, code: code)
            #expect(done.status == .ok)
            let profiles = try #require(try done.json()["profiles"] as? [String: Any])
            #expect(profiles.count == 1)
            let profile = try #require(profiles["Cablevision"] as? [String: Any])
            // Profile timestamps are JSON numbers (int64 epoch ms), unlike the session window.
            #expect(profile["notBefore"] as? Int64 == approvedAt)
            #expect(profile["notAfter"] as? Int64 == approvedAt + 30 * 24 * 3_600_000)
            #expect(!(profile["notBefore"] is String))
            #expect(profile["issuer"] as? String == "Cablevision")
            #expect(profile["type"] as? String == "regular")
            let attributes = try #require(profile["attributes"] as? [String: [String: Any]])
            #expect(attributes["userID"]?["value"] as? String == "alice")
            #expect(attributes["userID"]?["state"] as? String == "plain")
            #expect(attributes["householdID"]?["state"] as? String == "plain")
            #expect((attributes["householdID"]?["value"] as? String)?.isEmpty == false)

            // Without AP-Device-Identifier the poll works too.
            let bare = try await client.send(
                .get,
                "/api/v2/REF30/profiles/code/\(code)",
                headers: [.authorization: "Bearer \(credentials.accessToken)"]
            )
            #expect(bare.status == .ok)
            #expect((try bare.json()["profiles"] as? [String: Any])?.count == 1)
        }
    }

    @Test func completedProfileStaysRetrievableUntilTheCodeExpires() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            harness.clock.advance(by: .milliseconds(1_799_999))
            #expect((try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])?.count == 1)
            harness.clock.advance(by: .milliseconds(1))
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_authentication_session")
        }
    }

    @Test func unknownAndExpiredCodesWhilePolling() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(try await client.poll(credentials, code: "NOSUCH1"), status: .badRequest, code: "invalid_parameter_code")

            let code = try await client.newCode(credentials)
            harness.clock.advance(by: .milliseconds(1_799_999))
            #expect(try await client.poll(credentials, code: code).text == #"{"profiles":{}}"#)
            harness.clock.advance(by: .milliseconds(1))
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_authentication_session")
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .gone)

            // Long after expiry the record is purged and the code becomes unknown: memory stays bounded.
            harness.clock.advance(by: .seconds(3600))
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_parameter_code")
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .notFound)
        }
    }

    @Test func autoApprovalCompletesTheCodeAfterTheDelay() async throws {
        let harness = Harness { $0.autoApproveAfter = .seconds(10) }
        let issuedAt = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "mvpd=DTV")
            harness.clock.advance(by: .milliseconds(9_999))
            #expect(try await client.poll(credentials, code: code).text == #"{"profiles":{}}"#)
            harness.clock.advance(by: .seconds(5))
            let profiles = try #require(try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])
            let profile = try #require(profiles["DTV"] as? [String: Any])
            #expect(profile["notBefore"] as? Int64 == issuedAt + 10_000)
        }
    }

    @Test func autoApprovalIsVisibleThroughDeviceProfiles() async throws {
        let harness = Harness { $0.autoApproveAfter = .seconds(3) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            _ = try await client.newCode(credentials, fields: "")
            let headers = Client.authorized(credentials)
            #expect(try await client.send(.get, "/api/v2/REF30/profiles", headers: headers).text == #"{"profiles":{}}"#)
            harness.clock.advance(by: .seconds(3))
            let profiles = try #require(try await client.send(.get, "/api/v2/REF30/profiles", headers: headers).json()["profiles"] as? [String: Any])
            // With no MVPD chosen, the first configured one is used.
            #expect(Array(profiles.keys) == ["Cablevision"])
        }
    }

    @Test func profilesAreKeyedByServiceProviderDeviceAndClient() async throws {
        try await Harness { $0.serviceProviders = ["REF30", "OTHER"] }.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, device: "tv-1")
            #expect(try await client.approve(#"{"code":"\#(code)","mvpd":"Spectrum"}"#).status == .ok)

            let mine = try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(credentials, device: "tv-1"))
            #expect((try mine.json()["profiles"] as? [String: Any]).map { Array($0.keys) } == ["Spectrum"])
            let one = try await client.send(.get, "/api/v2/REF30/profiles/Spectrum", headers: Client.authorized(credentials, device: "tv-1"))
            #expect((try one.json()["profiles"] as? [String: Any])?.count == 1)
            let none = try await client.send(.get, "/api/v2/REF30/profiles/DTV", headers: Client.authorized(credentials, device: "tv-1"))
            #expect(none.text == #"{"profiles":{}}"#)

            let otherDevice = try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(credentials, device: "tv-2"))
            #expect(otherDevice.text == #"{"profiles":{}}"#)
            let otherProvider = try await client.send(.get, "/api/v2/OTHER/profiles", headers: Client.authorized(credentials, device: "tv-1"))
            #expect(otherProvider.text == #"{"profiles":{}}"#)
            let otherClient = try await client.credentials()
            let foreign = try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(otherClient, device: "tv-1"))
            #expect(foreign.text == #"{"profiles":{}}"#)

            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(credentials, device: nil)),
                status: .badRequest,
                code: "invalid_header_device_identifier"
            )
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/profiles/Nope", headers: Client.authorized(credentials)),
                status: .badRequest,
                code: "invalid_parameter_mvpd"
            )
        }
    }

    @Test func configurationListsTheConfiguredMVPDs() async throws {
        let harness = Harness {
            $0.mvpds = [
                SimulatedMVPD(id: "Alpha", displayName: "Alpha Cable", logoUrl: "https://example.com/a.png"),
                SimulatedMVPD(id: "Beta", displayName: "Beta TV", authPerAggregator: true),
            ]
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let reply = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            #expect(reply.status == .ok)
            let requestor = try #require(try reply.json()["requestor"] as? [String: Any])
            #expect(requestor["id"] as? String == "REF30")
            #expect((requestor["name"] as? String)?.isEmpty == false)
            #expect((requestor["domains"] as? [[String: Any]])?.first?["name"] as? String == "adobe.com")
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]])
            #expect(mvpds.map { $0["id"] as? String } == ["Alpha", "Beta"])
            #expect(mvpds.map { $0["displayName"] as? String } == ["Alpha Cable", "Beta TV"])
            #expect(mvpds.map { $0["authPerAggregator"] as? Bool } == [false, true])
            #expect(mvpds[0]["logoUrl"] as? String == "https://example.com/a.png")
            #expect((mvpds[1]["logoUrl"] as? String)?.hasSuffix("/_sim/logos/Beta.svg") == true)
        }
    }
}
