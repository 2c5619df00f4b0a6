import Foundation
import Hummingbird
import PassSimulator
import Testing

/// Degraded access (AuthNAll, AuthZAll, AuthZNone), home-based authentication and item errors, replaying the samples
/// of Adobe's REST v2 decisions, sessions and profiles pages.
@Suite("Degradation, home-based authentication and item errors")
struct DegradationAndItemErrorTests {
    static func put(_ client: Client, _ settings: String) async throws {
        let reply = try await client.send(.put, "/_sim/entitlements", headers: [.contentType: "application/json"], body: settings)
        #expect(reply.status == .ok, "\(reply.text)")
    }

    static func decide(
        _ client: Client,
        _ credentials: Credentials,
        _ kind: String = "authorize",
        mvpd: String = "Cablevision",
        resources: String = #"["REF30","apasstest1"]"#,
        from address: String? = nil
    ) async throws -> [[String: Any]] {
        var headers = Client.authorized(credentials)
        if let address { headers[Client.name("X-Forwarded-For")] = address }
        let reply = try await client.jsonPost("/api/v2/REF30/decisions/\(kind)/\(mvpd)", #"{"resources":\#(resources)}"#, headers: headers)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["decisions"] as? [[String: Any]])
    }

    static let sessionFields = "mvpd=Cablevision&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"

    /// Adobe's AuthNAll / AuthZAll decisions sample for one resource (`${degradedMvpd}` → Cablevision).
    static func documentedPermit(_ resource: String, window: Bool) -> String {
        let times = window ? #", "notBefore": 1697543318183, "notAfter": 1697549918183"# : ""
        return #"""
            {"resource": "\#(resource)", "serviceProvider": "REF30", "mvpd": "Cablevision", "source": "degradation", "authorized": true,
             "token": {"notBefore": 1697543318183, "notAfter": 1697543918183, "serializedToken": "PHNp"}\#(times)}
            """#
    }

    @Test func authNAllAnswersSessionsProfilesAndDecisionsWithoutTheMVPD() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await Self.put(client, #"{"degradation":[{"serviceProvider":"REF30","mvpd":"Cablevision","rule":"AuthNAll"}]}"#)
            let session = try await client.createSession(credentials, fields: Self.sessionFields)
            try expectDocumentedShape(
                try session.json(),
                #"""
                {"actionName": "authorize", "actionType": "direct", "reasonType": "degraded", "url": "/api/v2/REF30/decisions/authorize/Cablevision",
                 "sessionId": "1b614390-6610-4d14-9421-6565f6e75958", "mvpd": "Cablevision", "serviceProvider": "REF30"}
                """#
            )
            let profile = try await client.send(.get, "/api/v2/REF30/profiles/Cablevision", headers: Client.authorized(credentials))
            try expectDocumentedShape(
                try profile.json(),
                #"""
                {"profiles": {"Cablevision": {"notBefore": 1697719042666, "notAfter": 1697719102666, "issuer": "Adobe", "type": "degraded",
                  "attributes": {"userID": {"value": "95cf93bcd183214a0bdf451aa9c8fa60e80f6b99ab48310c73b480f1", "state": "plain"}}}}}
                """#,
                allowingExtra: ["sessionId"]
            )
            let userID =
                ((try profile.json()["profiles"] as? [String: [String: Any]])?["Cablevision"]?["attributes"] as? [String: [String: Any]])?[
                    "userID"
                ]?["value"] as? String
            #expect(userID?.hasPrefix("95cf93bcd183214a") == true)

            let decisions = try await Self.decide(client, credentials)
            try expectDocumentedShape(decisions[0], Self.documentedPermit("REF30", window: true))
            try expectDocumentedShape(decisions[1], Self.documentedPermit("apasstest1", window: true))
            let preauthorized = try await Self.decide(client, credentials, "preauthorize")
            #expect(preauthorized.map { $0["authorized"] as? Bool } == [true, true])
            #expect(preauthorized.allSatisfy { $0["token"] == nil && $0["source"] as? String == "degradation" })

            // Lifting the rule brings back the basic flow: a code to enter.
            try await Self.put(client, "{}")
            let code = try await client.createSession(credentials, device: "device-2", fields: Self.sessionFields)
            #expect(try code.json()["actionName"] as? String == "authenticate")
        }
    }

    @Test func authZAllPermitsAndAuthZNoneDeniesEveryResource() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            // A rule for every requestor, overridden for REF30.
            try await Self.put(
                client,
                #"{"degradation":[{"mvpd":"Cablevision","rule":"AuthZNone"},{"serviceProvider":"REF30","mvpd":"Cablevision","rule":"AuthZAll"}]}"#
            )
            let permitted = try await Self.decide(client, credentials)
            try expectDocumentedShape(permitted[0], Self.documentedPermit("REF30", window: false))
            try expectDocumentedShape(permitted[1], Self.documentedPermit("apasstest1", window: false))
            // AuthZAll leaves authentication alone.
            #expect(try await client.createSession(credentials, fields: Self.sessionFields).json()["actionName"] as? String == "authenticate")

            try await Self.put(client, #"{"degradation":[{"mvpd":"Cablevision","rule":"AuthZNone"}]}"#)
            let denied = try await Self.decide(client, credentials)
            for (index, resource) in ["REF30", "apasstest1"].enumerated() {
                try expectDocumentedShape(
                    denied[index],
                    #"""
                    {"resource": "\#(resource)", "serviceProvider": "REF30", "mvpd": "Cablevision", "source": "degradation", "authorized": false,
                     "error": {"status": 403, "code": "authorization_denied_by_degradation_rule",
                               "message": "The integration has an AuthZNone rule applied for the requested resources",
                               "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                               "action": "none"}}
                    """#
                )
            }
            #expect(
                try await client.send(.put, "/_sim/entitlements", body: #"{"degradation":[{"mvpd":"Cablevision","rule":"AuthZSome"}]}"#).status
                    == .badRequest
            )
        }
    }

    @Test func aDegradedPartnerIntegrationIsAuthNAll() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let put = try await client.send(
                .put,
                "/_sim/integrations/REF30/Cablevision",
                headers: [.contentType: "application/json"],
                body: #"{"degraded":true}"#
            )
            #expect(put.status == .ok)
            let session = try await client.createSession(credentials, fields: Self.sessionFields)
            #expect(try session.json()["reasonType"] as? String == "degraded")
            #expect(
                try await Self.decide(client, credentials).allSatisfy {
                    $0["source"] as? String == "degradation" && $0["authorized"] as? Bool == true
                }
            )
        }
    }

    @Test func homeBasedAuthenticationFollowsTheDeviceAddress() async throws {
        let harness = Harness {
            $0.entitlements = EntitlementSettings(homeNetworks: ["Cablevision": HomeNetwork(addresses: ["192.168.0.0/16", "fd00::/8"], ttl: 600)])
            // The test stands in for an edge proxy that names each client's address.
            $0.trustForwardedFor = true
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            var home = Client.authorized(credentials)
            home[Client.name("X-Forwarded-For")] = "192.168.1.20"
            let created = try await client.form(.post, "/api/v2/REF30/sessions", headers: home, fields: Self.sessionFields)
            let code = try #require(try created.json()["code"] as? String)
            let now = harness.clock.epochMillisecondsNow
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            let profile = try #require(
                (try await client.send(.get, "/api/v2/REF30/profiles/Cablevision", headers: home).json()["profiles"] as? [String: [String: Any]])?[
                    "Cablevision"
                ]
            )
            #expect((profile["attributes"] as? [String: [String: Any]])?["hba_status"]?["value"] as? String == "true")
            #expect(profile["notAfter"] as? Int64 == now + 600_000)

            #expect(try await Self.decide(client, credentials, from: "192.168.7.7").allSatisfy { $0["authorized"] as? Bool == true })
            let away = try await Self.decide(client, credentials, from: "203.0.113.9")
            #expect(away.map { $0["authorized"] as? Bool } == [false, false])
            let error = try #require(away[0]["error"] as? [String: Any])
            #expect(error["code"] as? String == "authorization_denied_by_hba_policies")
            #expect(error["status"] as? Int == 403)
            #expect(error["action"] as? String == "authentication")
            #expect(away[0]["source"] as? String == "mvpd")

            // A login away from home is a regular one: usable anywhere, with the usual lifetime.
            var away2 = Client.authorized(credentials, device: "device-2")
            away2[Client.name("X-Forwarded-For")] = "203.0.113.9"
            let second = try await client.form(.post, "/api/v2/REF30/sessions", headers: away2, fields: Self.sessionFields)
            #expect(try await client.approve(#"{"code":"\#(try #require(try second.json()["code"] as? String))"}"#).status == .ok)
            let regular = try #require(
                (try await client.send(.get, "/api/v2/REF30/profiles/Cablevision", headers: away2).json()["profiles"] as? [String: [String: Any]])?[
                    "Cablevision"
                ]
            )
            #expect((regular["attributes"] as? [String: [String: Any]])?["hba_status"]?["value"] as? String == "false")
            var headers = Client.authorized(credentials, device: "device-2")
            headers[Client.name("X-Forwarded-For")] = "198.51.100.1"
            let decisions = try await client.jsonPost("/api/v2/REF30/decisions/authorize/Cablevision", #"{"resources":["REF30"]}"#, headers: headers)
            #expect((try decisions.json()["decisions"] as? [[String: Any]])?.first?["authorized"] as? Bool == true)
        }
    }

    @Test func itemErrorsPerResourceAndPerMVPD() async throws {
        let harness = Harness { $0.denyResources = ["HBO": "Upgrade to watch HBO."] }
        try await harness.run { client in
            let credentials = try await client.credentials()
            try await V2DecisionTests.signIn(client, credentials)
            try await V2DecisionTests.signIn(client, credentials, mvpd: "DTV")
            try await Self.put(
                client,
                #"""
                {"itemErrors": {"resources": {"adult-movie": "authorization_denied_by_parental_controls",
                                              "live": {"code": "network_connection_timeout", "details": "The MVPD did not answer."}},
                                "mvpds": {"DTV": "network_received_error"}}}
                """#
            )
            for kind in ["authorize", "preauthorize"] {
                let decisions = try await Self.decide(client, credentials, kind, resources: #"["REF30","adult-movie","live","HBO"]"#)
                #expect(decisions.map { $0["authorized"] as? Bool } == [true, false, false, false])
                let errors = decisions.map { $0["error"] as? [String: Any] }
                #expect(
                    errors.map { $0?["code"] as? String } == [
                        nil, "authorization_denied_by_parental_controls", "network_connection_timeout",
                        kind == "authorize" ? "authorization_denied_by_mvpd" : "preauthorization_denied_by_mvpd",
                    ]
                )
                #expect(errors.map { $0?["action"] as? String } == [nil, "none", "retry", "none"])
                #expect(errors[1]?["status"] as? Int == 403)
                #expect(
                    errors[1]?["message"] as? String
                        == #"The MVPD has returned a "Deny" decision due parental controls settings for the specified resource."#
                )
                #expect(errors[2]?["details"] as? String == "The MVPD did not answer.")
                #expect(decisions.dropFirst().allSatisfy { $0["token"] == nil && $0["source"] as? String == "mvpd" })
            }
            let dtv = try await Self.decide(client, credentials, mvpd: "DTV")
            #expect(dtv.allSatisfy { ($0["error"] as? [String: Any])?["code"] as? String == "network_received_error" })
            #expect(
                try await client.send(.put, "/_sim/entitlements", body: #"{"itemErrors":{"resources":{"x":"made_up_code"}}}"#).status == .badRequest
            )
        }
    }
}
