import Foundation
import Hummingbird
import PassSimulator
import Synchronization
import Testing

@Suite("Fault injection, statistics and scripted codes")
struct FaultTests {
    static func putFaults(_ client: Client, _ json: String) async throws {
        let reply = try await client.send(.put, "/_sim/faults", body: json)
        #expect(reply.status == .ok, "\(reply.text)")
    }

    static func stats(_ client: Client) async throws -> [String: Any] {
        try await client.send(.get, "/_sim/stats").json()
    }

    static func faultCount(_ stats: [String: Any], _ kind: String) -> Int? {
        (stats["faults"] as? [String: Int])?[kind]
    }

    @Test func error5xxAnswersWithoutProcessing() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await Self.putFaults(client, #"{"sessions":{"error5xx":1,"error5xxStatuses":[503]}}"#)
            let reply = try await client.createSession(credentials)
            #expect(reply.status == .serviceUnavailable)
            #expect(reply.contentType == "text/html")
            #expect(reply.text.contains("<title>503 Service Temporarily Unavailable</title>"))
            // The request never reached the backend: no code was issued.
            #expect((try await client.send(.get, "/_sim/codes").json()["codes"] as? [Any])?.isEmpty == true)
            // Other classes are untouched.
            #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials)).status == .ok)

            try await Self.putFaults(client, #"{"default":{"error5xx":1}}"#)
            for _ in 1...6 {
                let status = try await client.send(.get, "/api/v1/config/REF30").status.code
                #expect([500, 502, 503].contains(status), "status \(status)")
            }
            let stats = try await Self.stats(client)
            #expect(Self.faultCount(stats, "error5xx") == 7)
            #expect((stats["requests"] as? [String: [String: Int]])?["sessions"]?["503"] == 1)
        }
    }

    @Test func throttlingFaultsWithAndWithoutRetryAfter() async throws {
        try await Harness().run { client in
            try await Self.putFaults(client, #"{"config":{"throttle429":1}}"#)
            let plain = try await client.send(.get, "/api/v1/config/REF30")
            #expect(plain.status == .tooManyRequests)
            #expect(plain.headers[.retryAfter] == nil)
            #expect(plain.text == ThrottleTests.openrestyBody)

            try await Self.putFaults(client, #"{"config":{"throttle429RetryAfter":1,"retryAfterSeconds":7}}"#)
            let withHeader = try await client.send(.get, "/api/v1/config/REF30")
            #expect(withHeader.status == .tooManyRequests)
            #expect(withHeader.headers[.retryAfter] == "7")

            let stats = try await Self.stats(client)
            #expect(Self.faultCount(stats, "throttle429") == 1)
            #expect(Self.faultCount(stats, "throttle429RetryAfter") == 1)
        }
    }

    @Test func malformedAnswersAre200WithATruncatedBody() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            try await Self.putFaults(client, #"{"poll":{"malformed":1}}"#)
            let v2 = try await client.poll(credentials, code: code)
            #expect(v2.status == .ok)
            #expect(v2.contentType.hasPrefix("application/json"))
            #expect(#"{"profiles":{}}"#.hasPrefix(v2.text) && v2.text.count < #"{"profiles":{}}"#.count)
            #expect((try? JSONSerialization.jsonObject(with: Data(v2.text.utf8))) == nil)
            // Errors are truncated too: the pending 404 of v1 becomes a broken 200.
            let v1 = try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials))
            #expect(v1.status == .ok)
            #expect((try? JSONSerialization.jsonObject(with: Data(v1.text.utf8))) == nil)
            #expect(Self.faultCount(try await Self.stats(client), "malformed") == 2)
        }
    }

    @Test func tokenExpiryHitsOnlyProtectedCalls() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await Self.putFaults(client, #"{"default":{"tokenExpiry":1}}"#)
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials)),
                status: .unauthorized,
                code: "invalid_access_token_client_application",
                action: "application-registration"
            )
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials)),
                status: .unauthorized,
                message: "Not Authorized",
                details: "access token expired"
            )
            // DCR carries no access token, so it is unaffected.
            #expect(try await client.register().status == .created)
            #expect(Self.faultCount(try await Self.stats(client), "tokenExpiry") == 2)
        }
    }

    @Test func latencyAdvancesTheClock() async throws {
        let harness = Harness { $0.faults = FaultConfiguration(defaults: FaultRates(latencyMs: 250)) }
        try await harness.run { client in
            let before = harness.clock.epochMillisecondsNow
            let signed = TestSigner.header(requestURI: "/api/v1/config/REF30", requestTime: before)
            #expect(try await client.send(.get, "/api/v1/config/REF30", headers: [.authorization: signed]).status == .ok)
            #expect(harness.clock.epochMillisecondsNow - before == 250)
            // Admin calls are never delayed.
            _ = try await client.send(.get, "/_sim/stats")
            #expect(harness.clock.epochMillisecondsNow - before == 250)
            #expect(Self.faultCount(try await Self.stats(client), "latency") == 1)
        }
    }

    @Test func latencySpreadIsReproducibleWithASeed() async throws {
        func delays(seed: UInt64) async throws -> [Int64] {
            let harness = Harness {
                $0.faults = FaultConfiguration(defaults: FaultRates(latencyMs: 100, latencySpreadMs: 50))
                $0.faultSeed = seed
            }
            let recorded = Recorder()
            try await harness.run { client in
                for _ in 1...8 {
                    let before = harness.clock.epochMillisecondsNow
                    _ = try await client.send(.get, "/api/v1/config/REF30")
                    recorded.append(harness.clock.epochMillisecondsNow - before)
                }
            }
            return recorded.values
        }
        let first = try await delays(seed: 7)
        #expect(first.count == 8)
        #expect(first.allSatisfy { (100...150).contains($0) }, "\(first)")
        #expect(try await delays(seed: 7) == first)
        #expect(Set(first).count > 1, "\(first)")
    }

    @Test func seededFaultSequencesRepeat() async throws {
        func statuses(seed: UInt64) async throws -> [UInt16] {
            let harness = Harness {
                $0.faults = FaultConfiguration(defaults: FaultRates(error5xx: 0.5))
                $0.faultSeed = seed
            }
            let recorded = Recorder()
            try await harness.run { client in
                for _ in 1...24 {
                    let signed = TestSigner.header(requestURI: "/api/v1/config/REF30", requestTime: harness.clock.epochMillisecondsNow)
                    recorded.append(Int64(try await client.send(.get, "/api/v1/config/REF30", headers: [.authorization: signed]).status.code))
                }
            }
            return recorded.values.map { UInt16($0) }
        }
        let first = try await statuses(seed: 42)
        #expect(try await statuses(seed: 42) == first)
        #expect(first.contains(200) && first.contains { $0 >= 500 }, "\(first)")
        #expect(try await statuses(seed: 43) != first)
    }

    @Test func earlyExpiryEndsCodesBeforeTheirPublishedWindow() async throws {
        let harness = Harness { $0.faults = FaultConfiguration(classes: [.sessions: FaultRates(earlyExpiry: 1)]) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let created = try await client.createSession(credentials).json()
            let code = try #require(created["code"] as? String)
            // The published window is unchanged…
            #expect(created["notAfter"] as? String == String(harness.clock.epochMillisecondsNow + 1_800_000))
            let regcode = try await client.newRegcode(Client.bearer(credentials))

            // …but the code is dead before its end.
            harness.clock.advance(by: .milliseconds(1_799_999))
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_authentication_session")
            #expect(try await client.send(.get, "/reggie/v1/REF30/regcode/\(regcode)").status == .notFound)
            #expect(try await client.approve(#"{"code":"\#(regcode)"}"#).status == .gone)
            #expect(Self.faultCount(try await Self.stats(client), "earlyExpiry") == 2)
        }
    }

    @Test func droppedConnectionsGetNoAnswer() async throws {
        let harness = Harness { $0.faults = FaultConfiguration(classes: [.config: FaultRates(drop: 1)]) }
        try await harness.runLive { client in
            await #expect(throws: (any Error).self) {
                _ = try await client.send(.get, "/api/v1/config/REF30")
            }
        }
        // A new connection is served normally; the drop was counted.
        try await harness.runLive { client in
            let reply = try await client.send(.get, "/_sim/stats")
            #expect(reply.status == .ok)
        }
        let stats = harness.simulator.stats
        #expect(stats.requests[.config]?["dropped"] == 1)
        #expect(stats.faults[.drop] == 1)
        #expect(stats.faultsByClass[.config]?[.drop] == 1)
    }

    @Test func statsCountRequestsByClassAndStatusAndCanBeReset() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            _ = try await client.poll(credentials, code: code)
            _ = try await client.poll(credentials, code: "NOPE123")
            _ = try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials))
            _ = try await client.send(.get, "/api/v1/config/REF30", headers: Client.bearer(credentials))

            let stats = try await Self.stats(client)
            let requests = try #require(stats["requests"] as? [String: [String: Int]])
            #expect(requests["dcr"] == ["201": 2])
            #expect(requests["sessions"] == ["200": 1])
            #expect(requests["poll"] == ["200": 1, "400": 1, "404": 1])
            #expect(requests["config"] == ["200": 1])
            #expect(requests["other"] == nil)
            let faults = try #require(stats["faults"] as? [String: Int])
            #expect(Set(faults.keys) == Set(FaultKind.allCases.map(\.rawValue)))
            #expect(faults.values.allSatisfy { $0 == 0 })

            #expect(try await client.send(.delete, "/_sim/stats").status == .noContent)
            #expect((try await Self.stats(client)["requests"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test func faultSettingsRoundTripAndAreValidated() async throws {
        let harness = Harness()
        try await harness.run { client in
            let initial = try await client.send(.get, "/_sim/faults").json()
            #expect(initial["default"] as? [String: Any] != nil)
            #expect(initial.count == 1)

            let settings = #"{"default":{"error5xx":0.1,"error5xxStatuses":[502],"latencyMs":5},"poll":{"throttle429":0.5},"regcode":{"drop":0.25}}"#
            let put = try await client.send(.put, "/_sim/faults", body: settings)
            #expect(put.status == .ok)
            let read = try await client.send(.get, "/_sim/faults").json()
            let defaults = try #require(read["default"] as? [String: Any])
            #expect(defaults.count == 3)
            #expect(defaults["error5xx"] as? Double == 0.1)
            #expect(defaults["error5xxStatuses"] as? [Int] == [502])
            #expect(defaults["latencyMs"] as? Int == 5)
            #expect(read["poll"] as? [String: Double] == ["throttle429": 0.5])
            // The alias is stored under the canonical class name.
            #expect(read["sessions"] as? [String: Double] == ["drop": 0.25])
            #expect(read["regcode"] == nil)
            let decoded = harness.simulator.faultConfiguration
            #expect(decoded.rates(for: .poll) == FaultRates(error5xx: 0.1, error5xxStatuses: [502], throttle429: 0.5, latencyMs: 5))

            for invalid in [
                #"{"default":{"error5xx":2}}"#,
                #"{"default":{"errror5xx":0.1}}"#,
                #"{"nowhere":{"drop":0.1}}"#,
                #"{"default":{"drop":0.6,"malformed":0.6}}"#,
                #"{"default":{"error5xxStatuses":[404]}}"#,
                #"{"default":{"latencyMs":-1}}"#,
                "not json",
            ] {
                let reply = try await client.send(.put, "/_sim/faults", body: invalid)
                #expect(reply.status == .badRequest, "\(invalid)")
                #expect(try reply.json()["error"] as? String == "invalid_faults")
            }
            // A refused PUT leaves the settings alone.
            #expect(harness.simulator.faultConfiguration == decoded)

            try harness.simulator.setFaultConfiguration(FaultConfiguration())
            #expect(try await client.send(.get, "/_sim/faults").json()["poll"] == nil)
            #expect(throws: FaultConfigurationError.self) {
                try harness.simulator.setFaultConfiguration(FaultConfiguration(defaults: FaultRates(drop: -0.1)))
            }
        }
    }

    @Test func faultsAreDecidedPerClass() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            try await Self.putFaults(client, #"{"default":{"error5xx":1},"poll":{"error5xx":0}}"#)
            #expect(try await client.poll(credentials, code: code).status == .ok)
            #expect(try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(credentials)).status.code >= 500)
            // Admin routes and browser pages are never faulted.
            #expect(try await client.send(.get, "/_sim/codes").status == .ok)
            #expect(try await client.send(.get, "/activate").status == .ok)
        }
    }
}

/// Numbers gathered inside a `@Sendable` test body.
final class Recorder: Sendable {
    private let storage = Mutex<[Int64]>([])

    func append(_ value: Int64) {
        self.storage.withLock { $0.append(value) }
    }

    var values: [Int64] { self.storage.withLock { $0 } }
}

@Suite("Scripted codes")
struct ScriptTests {
    static func script(_ client: Client, _ code: String, _ body: String) async throws -> Reply {
        try await client.send(.put, "/_sim/codes/\(code)/script", body: body)
    }

    @Test func scriptedDenyEndsTheCode() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            let reply = try await Self.script(client, code, #"{"outcome":"deny"}"#)
            #expect(reply.status == .ok)
            #expect(try reply.json()["status"] as? String == "denied")
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_authentication_session")
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .gone)
            #expect(try await Self.script(client, code, #"{"outcome":"approve"}"#).status == .gone)
        }
    }

    @Test func scriptedDenyAfterADelay() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newRegcode(Client.bearer(credentials))
            #expect(try await Self.script(client, code, #"{"outcome":"deny","after":4}"#).status == .ok)
            harness.clock.advance(by: .milliseconds(3_999))
            #expect(try await client.send(.get, "/reggie/v1/REF30/regcode/\(code)").status == .ok)
            harness.clock.advance(by: .milliseconds(1))
            #expect(try await client.send(.get, "/reggie/v1/REF30/regcode/\(code)").status == .notFound)
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials)).status == .notFound)
        }
    }

    @Test func scriptedApproveAfterCompletesAtTheDueTime() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "")
            harness.clock.advance(by: .seconds(2))
            let scriptedAt = harness.clock.epochMillisecondsNow
            let reply = try await Self.script(client, code, #"{"outcome":"approve","after":10,"mvpd":"DTV","userId":"jo"}"#)
            #expect(reply.status == .ok)
            #expect(try reply.json()["status"] as? String == "pending")
            let listed = try #require((try await client.send(.get, "/_sim/codes").json()["codes"] as? [[String: Any]])?.first)
            #expect((listed["script"] as? [String: Any])?["outcome"] as? String == "approve")

            harness.clock.advance(by: .milliseconds(9_999))
            #expect(try await client.poll(credentials, code: code).text == #"{"profiles":{}}"#)
            harness.clock.advance(by: .milliseconds(1))
            let profiles = try #require(try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])
            let profile = try #require(profiles["DTV"] as? [String: Any])
            #expect(profile["notBefore"] as? Int64 == scriptedAt + 10_000)
            #expect((profile["attributes"] as? [String: [String: Any]])?["userID"]?["value"] as? String == "jo")

            // v1 codes follow scripts too, observed through the device's token poll.
            let regcode = try await client.newRegcode(Client.bearer(credentials), deviceId: "scripted-tv")
            #expect(try await Self.script(client, regcode, #"{"outcome":"approve","after":1}"#).status == .ok)
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials), deviceId: "scripted-tv").status == .notFound)
            harness.clock.advance(by: .seconds(1))
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials), deviceId: "scripted-tv").status == .ok)
        }
    }

    @Test func scriptedNeverOverridesAutoApproval() async throws {
        let harness = Harness { $0.autoApproveAfter = .seconds(5) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            #expect(try await Self.script(client, code, #"{"outcome":"never"}"#).status == .ok)
            harness.clock.advance(by: .seconds(60))
            #expect(try await client.poll(credentials, code: code).text == #"{"profiles":{}}"#)
            // An explicit approval still works.
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            #expect((try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])?.count == 1)
        }
    }

    @Test func defaultScriptAppliesToNewCodes() async throws {
        let harness = Harness { $0.defaultCodeScript = CodeScript(outcome: .deny, after: 3) }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            harness.clock.advance(by: .milliseconds(2_999))
            #expect(try await client.poll(credentials, code: code).status == .ok)
            harness.clock.advance(by: .milliseconds(1))
            try expectEnhancedError(try await client.poll(credentials, code: code), status: .badRequest, code: "invalid_authentication_session")
        }
    }

    @Test func scriptRequestsAreValidated() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            #expect(try await Self.script(client, "NOPE123", #"{"outcome":"deny"}"#).status == .notFound)
            let code = try await client.newCode(credentials)
            #expect(try await Self.script(client, code, #"{"outcome":"later"}"#).status == .badRequest)
            #expect(try await Self.script(client, code, #"{"outcome":"approve","mvpd":"Nope"}"#).status == .badRequest)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            #expect(try await Self.script(client, code, #"{"outcome":"deny"}"#).status == .conflict)
            #expect(try await client.send(.get, "/_sim/codes/\(code)/script").status == .methodNotAllowed)
        }
    }
}
