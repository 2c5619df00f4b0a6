import Foundation
import Hummingbird
import HummingbirdTesting
import PassSimulator
import Testing

/// One request of an endpoint class, for checking that every fault reaches every class.
struct Probe: Sendable, CustomTestStringConvertible {
    let endpointClass: EndpointClass
    let method: HTTPRequest.Method
    let path: String

    init(_ endpointClass: EndpointClass, _ method: HTTPRequest.Method, _ path: String) {
        self.endpointClass = endpointClass
        self.method = method
        self.path = path
    }

    var testDescription: String { "\(self.endpointClass.rawValue): \(self.method) \(self.path)" }

    /// DCR register and token, configuration, and the v1 and v2 endpoints of each class.
    static let all: [Probe] = [
        Probe(.dcr, .post, "/o/client/register"),
        Probe(.dcr, .post, "/o/client/token"),
        Probe(.sessions, .post, "/api/v2/REF30/sessions"),
        Probe(.sessions, .post, "/reggie/v1/REF30/regcode"),
        Probe(.poll, .get, "/api/v2/REF30/profiles/code/ABCDEFG"),
        Probe(.poll, .get, "/api/v1/tokens/authn?requestor=REF30&deviceId=ZA"),
        Probe(.decisions, .post, "/api/v2/REF30/decisions/authorize/Cablevision"),
        Probe(.decisions, .get, "/api/v1/authorize?requestor=REF30&deviceId=ZA&resource=REF30"),
        Probe(.config, .get, "/api/v2/REF30/configuration"),
        Probe(.config, .get, "/api/v1/config/REF30"),
        Probe(.other, .get, "/api/v2/REF30/profiles"),
        Probe(.other, .get, "/api/v1/checkauthn?requestor=REF30&deviceId=ZA"),
    ]

    func send(_ client: Client) async throws -> Reply {
        try await client.send(self.method, self.path, headers: [.contentType: "application/json"], body: "{}")
    }
}

@Suite("Faults reach every endpoint class")
struct FaultClassTests {
    static func putFaults(_ client: Client, _ json: String) async throws {
        let reply = try await client.send(.put, "/_sim/faults", body: json)
        #expect(reply.status == .ok, "\(reply.text)")
    }

    @Test("5xx, 429 with and without Retry-After, latency and latency spikes", arguments: Probe.all)
    func responseFaultsTargetTheClass(probe: Probe) async throws {
        let harness = Harness { $0.throttleEnabled = false }
        try await harness.run { client in
            let name = probe.endpointClass.rawValue
            // A different class is never affected.
            let bystander = try #require(Probe.all.first { $0.endpointClass != probe.endpointClass })

            try await Self.putFaults(client, #"{"\#(name)":{"error5xx":1,"error5xxStatuses":[504]}}"#)
            let failed = try await probe.send(client)
            #expect(failed.status.code == 504)
            #expect(failed.text.contains("504 Gateway Time-out"))
            #expect(try await bystander.send(client).status.code < 500)

            try await Self.putFaults(client, #"{"\#(name)":{"throttle429":1}}"#)
            let throttled = try await probe.send(client)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.headers[.retryAfter] == nil)
            #expect(try await bystander.send(client).status != .tooManyRequests)

            try await Self.putFaults(client, #"{"\#(name)":{"throttle429RetryAfter":1,"retryAfterSeconds":3}}"#)
            let told = try await probe.send(client)
            #expect(told.status == .tooManyRequests)
            #expect(told.headers[.retryAfter] == "3")

            try await Self.putFaults(client, #"{"\#(name)":{"latencyMs":700}}"#)
            var before = harness.clock.epochMillisecondsNow
            _ = try await probe.send(client)
            #expect(harness.clock.epochMillisecondsNow - before == 700)
            before = harness.clock.epochMillisecondsNow
            _ = try await bystander.send(client)
            #expect(harness.clock.epochMillisecondsNow == before)

            try await Self.putFaults(client, #"{"\#(name)":{"latencySpike":1,"latencySpikeMs":9000}}"#)
            before = harness.clock.epochMillisecondsNow
            _ = try await probe.send(client)
            #expect(harness.clock.epochMillisecondsNow - before == 9000)

            let stats = harness.simulator.stats
            #expect(stats.faultsByClass[probe.endpointClass]?[.error5xx] == 1)
            #expect(stats.faultsByClass[probe.endpointClass]?[.throttle429] == 1)
            #expect(stats.faultsByClass[probe.endpointClass]?[.throttle429RetryAfter] == 1)
            #expect(stats.faultsByClass[probe.endpointClass]?[.latency] == 1)
            #expect(stats.faultsByClass[probe.endpointClass]?[.latencySpike] == 1)
            #expect(stats.faultsByClass[bystander.endpointClass] == nil)
        }
    }

    @Test("dropped connections", arguments: Probe.all)
    func dropsTargetTheClass(probe: Probe) async throws {
        let harness = Harness {
            $0.throttleEnabled = false
            $0.faults = FaultConfiguration(classes: [probe.endpointClass: FaultRates(drop: 1)])
        }
        try await harness.runLive { client in
            await #expect(throws: (any Error).self) {
                _ = try await probe.send(client)
            }
        }
        #expect(harness.simulator.stats.requests[probe.endpointClass]?["dropped"] == 1)
        #expect(harness.simulator.stats.faultsByClass[probe.endpointClass]?[.drop] == 1)
    }

    @Test func aMixOverAllReachesEveryClass() async throws {
        let harness = Harness {
            $0.throttleEnabled = false
            $0.faultSeed = 42
        }
        let mix = #"""
            {"all":{"error5xx":0.2,"throttle429":0.2,"throttle429RetryAfter":0.2,"retryAfterSeconds":2,"drop":0.2,
                    "latencyMs":1,"latencySpike":0.3,"latencySpikeMs":5}}
            """#
        try await harness.runLive { client in
            try await Self.putFaults(client, mix)
            let port = try #require(client.client.port)
            // Each drop closes the connection, so every request gets a connection of its own.
            for probe in Probe.all {
                for _ in 0..<25 {
                    _ = try? await TestClient.withClient(host: "127.0.0.1", port: port) { fresh in
                        try await fresh.execute(
                            TestClient.Request(
                                probe.path,
                                method: probe.method,
                                authority: "localhost",
                                headers: [.contentType: "application/json"],
                                body: ByteBuffer(string: "{}")
                            )
                        )
                    }
                }
            }
        }
        let stats = harness.simulator.stats
        for endpointClass in EndpointClass.allCases {
            let faults = stats.faultsByClass[endpointClass] ?? [:]
            for kind in [FaultKind.error5xx, .throttle429, .throttle429RetryAfter, .drop, .latency, .latencySpike] {
                #expect((faults[kind] ?? 0) > 0, "\(endpointClass.rawValue) never had \(kind.rawValue): \(faults)")
            }
            let answered = stats.requests[endpointClass] ?? [:]
            #expect((answered["dropped"] ?? 0) > 0)
            #expect((answered["429"] ?? 0) > 0)
        }
        // "all" is stored as the default.
        #expect(harness.simulator.faultConfiguration.defaults.drop == 0.2)
    }

    @Test func allAndDefaultCannotBothBeGiven() async throws {
        try await Harness().run { client in
            let reply = try await client.send(.put, "/_sim/faults", body: #"{"all":{"drop":0.1},"default":{"drop":0.2}}"#)
            #expect(reply.status == .badRequest)
        }
    }
}
