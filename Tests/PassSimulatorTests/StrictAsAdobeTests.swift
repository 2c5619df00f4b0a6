import Foundation
import Hummingbird
import PassSimulator
import Testing

/// Answers Adobe documents for the cases a lenient backend glosses over: logging out with nothing to log out,
/// decisions without a profile, and the `retry` error's status.
@Suite("Strict as Adobe: logout, decisions without a profile, retry errors")
struct StrictAsAdobeTests {
    static func logout(_ client: Client, _ credentials: Credentials, mvpd: String, sp: String = "REF30") async throws -> [String: String] {
        let reply = try await client.send(
            .get,
            "/api/v2/\(sp)/logout/\(mvpd)?redirectUrl=https%3A%2F%2Fadobe.com",
            headers: Client.authorized(credentials)
        )
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require((try reply.json()["logouts"] as? [String: [String: String]])?[mvpd], "\(reply.text)")
    }

    @Test func logoutWithoutAProfileIsInvalid() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            // Adobe's logout API page: `invalid` when "no valid profile is found", with actionType `none` and no url.
            #expect(
                try await Self.logout(client, credentials, mvpd: "Cablevision") == [
                    "actionName": "invalid", "actionType": "none", "mvpd": "Cablevision",
                ]
            )
        }
    }

    @Test func logoutOfAnExpiredProfileIsInvalid() async throws {
        let harness = Harness { $0.profileTTL = .seconds(60) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            try await V2DecisionTests.signIn(client, credentials)
            harness.clock.advance(by: .seconds(61))
            #expect(try await Self.logout(client, credentials, mvpd: "Cablevision")["actionName"] == "invalid")
        }
    }

    @Test func logoutDuringTemporaryOrDegradedAccessIsComplete() async throws {
        let harness = Harness {
            $0.serviceProviders = ["REF30", "apasstest1"]
            EntitlementSettings(tempPass: ["TempPass_TEST40": TempPassSettings(ttl: 3600)]).apply(to: &$0)
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            // Adobe's samples 6 and 7: `complete`, whether or not the device used its temporary or degraded access.
            #expect(try await Self.logout(client, credentials, mvpd: "TempPass_TEST40", sp: "apasstest1")["actionName"] == "complete")
            let put = try await client.send(.put, "/_sim/entitlements", body: #"{"degradation":[{"mvpd":"Cablevision","rule":"AuthZAll"}]}"#)
            #expect(put.status == .ok, "\(put.text)")
            #expect(try await Self.logout(client, credentials, mvpd: "Cablevision")["actionName"] == "complete")
        }
    }

    @Test(arguments: ["authorize", "preauthorize"])
    func decisionsWithoutAProfileAreA403ByDefault(kind: String) async throws {
        #expect(SimulatorConfiguration().missingProfileDecision == .topLevel)
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await V2DecisionTests.decide(client, credentials, kind),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
        }
    }

    @Test(arguments: ["authorize", "preauthorize"])
    func decisionsWithoutAProfileCanDenyEveryItemInstead(kind: String) async throws {
        let harness = Harness {
            $0.missingProfileDecision = .itemLevel
            $0.profileTTL = .seconds(60)
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let reply = try await V2DecisionTests.decide(client, credentials, kind, body: #"{"resources":["REF30","Live"]}"#)
            #expect(reply.status == .ok, "\(reply.text)")
            let decisions = try #require(try reply.json()["decisions"] as? [[String: Any]])
            #expect(decisions.map { $0["resource"] as? String } == ["REF30", "Live"])
            for decision in decisions {
                #expect(decision["authorized"] as? Bool == false)
                #expect(decision["token"] == nil)
                let error = try #require(decision["error"] as? [String: Any])
                #expect(error["code"] as? String == "authenticated_profile_missing")
                #expect(error["status"] as? Int == 403)
                #expect(error["action"] as? String == "authentication")
            }
            // An expired profile: the same, with its own code.
            try await V2DecisionTests.signIn(client, credentials)
            harness.clock.advance(by: .seconds(61))
            let expired = try await V2DecisionTests.decide(client, credentials, kind)
            #expect(expired.status == .ok)
            let item = try #require((try expired.json()["decisions"] as? [[String: Any]])?.first)
            #expect((item["error"] as? [String: Any])?["code"] as? String == "authenticated_profile_expired")
        }
    }

    @Test(arguments: [#"{"error5xx":1,"errorAction":"retry"}"#, #"{"error4xx":1,"error4xxStatuses":[400],"errorAction":"retry"}"#])
    func anInjectedRetryIsAdobes403MaximumExecutionTimeExceeded(rates: String) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await V2DecisionTests.signIn(client, credentials)
            try await FaultTests.putFaults(client, #"{"decisions":\#(rates)}"#)
            let reply = try await V2DecisionTests.decide(client, credentials)
            // The enhanced error codes list: maximum_execution_time_exceeded, 403, action retry.
            try expectEnhancedError(reply, status: .forbidden, code: "maximum_execution_time_exceeded", action: "retry")
            #expect(
                try reply.json()["message"] as? String
                    == "The request did not complete in the maximum allowed time. Retrying the request might solve the issue."
            )
            let stats = try await FaultTests.stats(client)
            #expect((stats["requests"] as? [String: [String: Int]])?["decisions"]?["403"] == 1)
        }
    }
}
