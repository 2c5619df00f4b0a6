import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("REST v2 decisions, profile attributes and logout")
struct V2DecisionTests {
    static func decide(
        _ client: Client,
        _ credentials: Credentials,
        _ kind: String = "authorize",
        mvpd: String = "Cablevision",
        device: String = "device-1",
        body: String = #"{"resources":["REF30"]}"#
    ) async throws -> Reply {
        try await client.jsonPost("/api/v2/REF30/decisions/\(kind)/\(mvpd)", body, headers: Client.authorized(credentials, device: device))
    }

    /// Authenticates `device` with `mvpd` through a v2 code.
    static func signIn(_ client: Client, _ credentials: Credentials, mvpd: String = "Cablevision", device: String = "device-1") async throws {
        let code = try await client.newCode(credentials, device: device, fields: "mvpd=\(mvpd)")
        #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
    }

    @Test func authorizeReturnsADecisionWithAShortMediaToken() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            let now = harness.clock.epochMillisecondsNow
            let reply = try await Self.decide(client, credentials, body: #"{"resources":["REF30","Live"]}"#)
            #expect(reply.status == .ok)
            let decisions = try #require(try reply.json()["decisions"] as? [[String: Any]])
            #expect(decisions.map { $0["resource"] as? String } == ["REF30", "Live"])
            let first = decisions[0]
            #expect(first["serviceProvider"] as? String == "REF30")
            #expect(first["mvpd"] as? String == "Cablevision")
            #expect(first["source"] as? String == "mvpd")
            #expect(first["authorized"] as? Bool == true)
            #expect(first["error"] == nil)
            #expect(first["notBefore"] as? Int64 == now)
            #expect(first["notAfter"] as? Int64 == now + 24 * 3_600_000)
            let token = try #require(first["token"] as? [String: Any])
            #expect(token["notBefore"] as? Int64 == now)
            #expect(token["notAfter"] as? Int64 == now + 420_000)
            let serialized = try #require(token["serializedToken"] as? String)
            let document = String(decoding: try #require(Data(base64Encoded: serialized)), as: UTF8.self)
            #expect(document.hasPrefix("<signatureInfo>"))
            #expect(document.contains("<resourceID>REF30</resourceID>"))
            #expect(document.contains("<mvpdId>Cablevision</mvpdId>"))
            #expect(document.contains("<userId>"))
            #expect(document.contains("<expires>\(now + 420_000)</expires>"))
            // Each resource has its own token.
            #expect((decisions[1]["token"] as? [String: Any])?["serializedToken"] as? String != serialized)
        }
    }

    @Test func denyByResourceAndByMVPD() async throws {
        let harness = Harness {
            $0.denyResources = ["HBO": "Upgrade to watch HBO."]
            $0.denyMVPDs = ["DTV": "DIRECTV does not carry this network."]
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            try await Self.signIn(client, credentials, mvpd: "DTV")
            let reply = try await Self.decide(client, credentials, body: #"{"resources":["REF30","HBO"]}"#)
            let decisions = try #require(try reply.json()["decisions"] as? [[String: Any]])
            #expect(decisions.map { $0["authorized"] as? Bool } == [true, false])
            let denied = decisions[1]
            #expect(denied["token"] == nil)
            #expect(denied["source"] as? String == "mvpd")
            let error = try #require(denied["error"] as? [String: Any])
            #expect(error["code"] as? String == "authorization_denied_by_mvpd")
            #expect(error["status"] as? Int == 403)
            #expect(error["action"] as? String == "none")
            #expect(error["details"] as? String == "Upgrade to watch HBO.")
            #expect((error["trace"] as? String)?.isEmpty == false)

            let byMVPD = try #require(try await Self.decide(client, credentials, mvpd: "DTV").json()["decisions"] as? [[String: Any]])
            #expect(byMVPD.first?["authorized"] as? Bool == false)
            #expect((byMVPD.first?["error"] as? [String: Any])?["details"] as? String == "DIRECTV does not carry this network.")

            // Runtime replacement clears the configured lists.
            #expect(try await client.send(.put, "/_sim/deny", body: #"{"resources":{"REF30":""}}"#).status == .ok)
            let after = try #require(
                try await Self.decide(client, credentials, body: #"{"resources":["REF30","HBO"]}"#).json()["decisions"] as? [[String: Any]]
            )
            #expect(after.map { $0["authorized"] as? Bool } == [false, true])
            #expect(((after[0]["error"] as? [String: Any])?["details"] as? String)?.contains("REF30") == true)
            let dtv = try #require(
                try await Self.decide(client, credentials, mvpd: "DTV", body: #"{"resources":["HBO"]}"#).json()["decisions"] as? [[String: Any]]
            )
            #expect(dtv.first?["authorized"] as? Bool == true)
            #expect(try await client.send(.put, "/_sim/deny", body: "not json").status == .badRequest)
        }
    }

    @Test func missingOrExpiredProfileIsATopLevelError() async throws {
        let harness = Harness { $0.profileTTL = .seconds(100) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await Self.decide(client, credentials),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
            try await Self.signIn(client, credentials)
            #expect(try await Self.decide(client, credentials).status == .ok)
            // A profile of another MVPD does not count.
            try expectEnhancedError(
                try await Self.decide(client, credentials, mvpd: "DTV"),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
            harness.clock.advance(by: .seconds(100))
            try expectEnhancedError(
                try await Self.decide(client, credentials, "preauthorize"),
                status: .forbidden,
                code: "authenticated_profile_expired",
                action: "authentication"
            )
        }
    }

    @Test func parameterErrors() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            try expectEnhancedError(try await Self.decide(client, credentials, mvpd: "Nope"), status: .badRequest, code: "invalid_parameter_mvpd")
            for body in [#"{"resources":[]}"#, #"{"resources":[""]}"#, "{}", "resources=REF30"] {
                try expectEnhancedError(
                    try await Self.decide(client, credentials, body: body),
                    status: .badRequest,
                    code: "invalid_parameter_resources"
                )
            }
            try expectEnhancedError(
                try await client.jsonPost("/api/v2/REF30/decisions/authorize/Cablevision", #"{"resources":["REF30"]}"#),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            try expectEnhancedError(
                try await client.jsonPost(
                    "/api/v2/REF30/decisions/authorize/Cablevision",
                    #"{"resources":["REF30"]}"#,
                    headers: Client.authorized(credentials, device: nil)
                ),
                status: .badRequest,
                code: "invalid_header_device_identifier"
            )
            #expect(try await client.send(.get, "/api/v2/REF30/decisions/authorize/Cablevision").status == .methodNotAllowed)
        }
    }

    @Test func preauthorizeMixesResultsWithoutTokensAndLimitsTheCount() async throws {
        let harness = Harness { $0.denyResources = ["B": ""] }
        try await harness.run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            let reply = try await Self.decide(client, credentials, "preauthorize", body: #"{"resources":["A","B","C"]}"#)
            #expect(reply.status == .ok)
            let decisions = try #require(try reply.json()["decisions"] as? [[String: Any]])
            #expect(decisions.map { $0["authorized"] as? Bool } == [true, false, true])
            #expect(decisions.allSatisfy { $0["token"] == nil })
            #expect((decisions[1]["error"] as? [String: Any])?["code"] as? String == "preauthorization_denied_by_mvpd")
            #expect(decisions[0]["notAfter"] is Int64 || decisions[0]["notAfter"] is Int)

            #expect(try await Self.decide(client, credentials, "preauthorize", body: #"{"resources":["1","2","3","4","5"]}"#).status == .ok)
            try expectEnhancedError(
                try await Self.decide(client, credentials, "preauthorize", body: #"{"resources":["1","2","3","4","5","6"]}"#),
                status: .forbidden,
                code: "too_many_resources",
                action: "configuration"
            )
            // The limit is per preauthorize call only.
            #expect(try await Self.decide(client, credentials, body: #"{"resources":["1","2","3","4","5","6"]}"#).status == .ok)
        }
        try await Harness { $0.preauthorizeResourceLimit = 2 }.run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            try expectEnhancedError(
                try await Self.decide(client, credentials, "preauthorize", body: #"{"resources":["1","2","3"]}"#),
                status: .forbidden,
                code: "too_many_resources",
                action: "configuration"
            )
        }
    }

    @Test func profilesCarryUserMetadataAttributes() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            let approval = try await client.approve(
                #"{"code":"\#(code)","userId":"ivy","attributes":{"channelID":["ESPN"],"maxRating":{"value":{"MPAA":"PG"},"state":"enc"}}}"#
            )
            #expect(approval.status == .ok)
            let profiles = try #require(try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])
            let attributes = try #require((profiles["Cablevision"] as? [String: Any])?["attributes"] as? [String: [String: Any]])
            #expect(Set(attributes.keys) == ["userID", "householdID", "zip", "maxRating", "channelID", "encryptedZip"])
            #expect(attributes["userID"]?["value"] as? String == "ivy")
            #expect((attributes["zip"]?["value"] as? [String])?.count == 2)
            #expect(attributes["zip"]?["state"] as? String == "plain")
            #expect(attributes["channelID"]?["value"] as? [String] == ["ESPN"])
            #expect(attributes["maxRating"]?["value"] as? [String: String] == ["MPAA": "PG"])
            #expect(attributes["maxRating"]?["state"] as? String == "enc")
            #expect(attributes["encryptedZip"]?["state"] as? String == "enc")
            let encrypted = try #require(attributes["encryptedZip"]?["value"] as? String)
            #expect(Data(base64Encoded: encrypted) != nil)
        }
    }

    @Test func logoutFollowsTheReferenceAndDropsTheProfile() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await Self.signIn(client, credentials)
            let headers = Client.authorized(credentials)
            let first = try await client.send(.get, "/api/v2/REF30/logout/Cablevision?redirectUrl=https%3A%2F%2Fadobe.com%2Fdone", headers: headers)
            #expect(first.status == .ok)
            let entry = try #require((try first.json()["logouts"] as? [String: [String: String]])?["Cablevision"])
            #expect(entry["actionName"] == "logout")
            #expect(entry["actionType"] == "interactive")
            #expect(entry["mvpd"] == "Cablevision")
            let url = try #require(entry["url"])
            let components = try #require(URLComponents(string: url))
            #expect(components.path == "/adobe-services/logout")
            #expect(
                PageTests.query(url) == [
                    "noflash": "true", "mso_id": "Cablevision", "requestor_id": "REF30", "redirect_url": "https://adobe.com/done",
                ]
            )

            // The logout page returns the browser to redirect_url.
            let page = try await client.send(.get, "\(components.path)?\(components.percentEncodedQuery ?? "")")
            #expect(page.status == .found)
            #expect(page.headers[.location] == "https://adobe.com/done")

            try expectEnhancedError(
                try await Self.decide(client, credentials),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
            // Nothing left to log out: Adobe's `invalid` ("log out of MVPD when no valid profile is found").
            let second = try await client.send(.get, "/api/v2/REF30/logout/Cablevision", headers: headers)
            #expect(
                (try second.json()["logouts"] as? [String: [String: String]])?["Cablevision"] == [
                    "actionName": "invalid", "actionType": "none", "mvpd": "Cablevision",
                ]
            )
        }
    }
}
