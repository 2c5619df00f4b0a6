import Hummingbird
import RegcodeTestSupport
import Testing

@testable import PassSimulator

@Suite("Throttling")
struct ThrottleTests {
    static let openrestyBody =
        "<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1></center><hr><center>openresty</center></body></html>"

    @Test func theRatePlusABurstOfTenThenTooManyRequests() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials, device: "busy-tv")
            // The request the rate allows plus the burst of 10 (Adobe's scenario table, see `Throttle`).
            for attempt in 1...11 {
                let reply = try await client.send(.get, "/api/v2/REF30/configuration", headers: headers)
                #expect(reply.status == .ok, "attempt \(attempt)")
            }
            let throttled = try await client.send(.get, "/api/v2/REF30/configuration", headers: headers)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.contentType == "text/html")
            #expect(throttled.text == Self.openrestyBody)
            #expect(throttled.headers[.retryAfter] == nil)

            // Other devices have their own buckets.
            #expect(
                try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials, device: "quiet-tv")).status == .ok
            )
            // Admin and browser pages are never throttled.
            #expect(try await client.send(.get, "/_sim/codes", headers: headers).status == .ok)
            #expect(try await client.send(.get, "/activate", headers: headers).status == .ok)

            // One token per second comes back.
            harness.clock.advance(by: .seconds(1))
            #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: headers).status == .ok)
            #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: headers).status == .tooManyRequests)
        }
    }

    @Test func dcrIsThrottledByForwardedAddress() async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            let forwarded: HTTPFields = [Client.name("X-Forwarded-For"): "203.0.113.7, 10.0.0.1", .contentType: "application/x-www-form-urlencoded"]
            for _ in 1...11 {
                let reply = try await client.send(.post, "/o/client/token", headers: forwarded, body: "")
                #expect(reply.status == .badRequest)
            }
            let throttled = try await client.send(.post, "/o/client/token", headers: forwarded, body: "")
            #expect(throttled.status == .tooManyRequests)
            let elsewhere: HTTPFields = [Client.name("X-Forwarded-For"): "198.51.100.1", .contentType: "application/x-www-form-urlencoded"]
            let other = try await client.send(.post, "/o/client/token", headers: elsewhere, body: "")
            #expect(other.status == .badRequest)
        }
    }

    @Test func disabledThrottleNeverAnswers429() async throws {
        try await Harness { $0.throttleEnabled = false }.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials)
            for _ in 1...40 {
                #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: headers).status == .ok)
            }
        }
    }

    @Test func configuredBurstAndRate() async throws {
        let harness = Harness {
            $0.throttleBurst = 3
            $0.throttleRatePerSecond = 2
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials, device: "tv")
            let path = "/api/v2/REF30/configuration"
            for _ in 1...4 { #expect(try await client.send(.get, path, headers: headers).status == .ok) }
            #expect(try await client.send(.get, path, headers: headers).status == .tooManyRequests)
            harness.clock.advance(by: .milliseconds(500))
            #expect(try await client.send(.get, path, headers: headers).status == .ok)
            #expect(try await client.send(.get, path, headers: headers).status == .tooManyRequests)
        }
    }

    @Test func idleBucketsAreEvicted() {
        let clock = ManualClock()
        let throttle = Throttle(burst: 10, ratePerSecond: 1, clock: .manual(clock))
        for index in 0..<1000 {
            #expect(throttle.allow("device-\(index)"))
        }
        #expect(throttle.bucketCount == 1000)
        // Eviction passes run once per drain time of a full bucket (11 s).
        clock.advance(by: .seconds(11))
        #expect(throttle.allow("late"))
        #expect(throttle.bucketCount == 1)
    }

    // MARK: Keyed as Adobe keys it (reference §8.2)

    /// Keyed by address, with `X-Forwarded-For` trusted (`--trust-forwarded-for`): in-process requests have no peer.
    static func trustingForwardedFor(_ configuration: inout SimulatorConfiguration) {
        configuration.throttleKey = .ip
        configuration.trustForwardedFor = true
    }

    static func forwarded(_ address: String, device: String? = nil) -> HTTPFields {
        var headers: HTTPFields = [Client.name("X-Forwarded-For"): "\(address), 10.0.0.1"]
        if let device { headers[Client.name("AP-Device-Identifier")] = Client.fingerprint(device) }
        return headers
    }

    /// Sends `count` configuration calls with `headers` plus the client's token, returning the statuses.
    static func burst(_ client: Client, _ credentials: Credentials, _ headers: HTTPFields, count: Int) async throws -> [Int] {
        let merged = Client.authorized(credentials, device: nil).merging(headers)
        var statuses: [Int] = []
        for _ in 0..<count {
            statuses.append(try await client.send(.get, "/api/v2/REF30/configuration", headers: merged).status.code)
        }
        return statuses
    }

    @Test func theDefaultKeyIsTheAddress() {
        #expect(SimulatorConfiguration().throttleKey == .ip)
    }

    @Test func differentForwardedAddressesHaveSeparateBuckets() async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            let credentials = try await client.credentials()
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.1"), count: 12)
            #expect(first == Array(repeating: 200, count: 11) + [429])
            // Only the first address of the list counts: the proxy's own address is shared by both.
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.2"), count: 11)
            #expect(second == Array(repeating: 200, count: 11))
        }
    }

    @Test func oneAddressSharesItsBucketAcrossDevicesInIPMode() async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            let credentials = try await client.credentials()
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-1"), count: 6)
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-2"), count: 6)
            #expect(first + second == Array(repeating: 200, count: 11) + [429])
            // v1 `deviceId` does not split the bucket either.
            let v1 = try await client.v1(
                .get,
                "/api/v1/tokens/authn",
                Client.bearer(credentials).merging(Self.forwarded("203.0.113.9")),
                deviceId: "other"
            )
            #expect(v1.status == .tooManyRequests)
        }
    }

    @Test func deviceModeSplitsOneAddressByDevice() async throws {
        try await Harness({ $0.throttleKey = .device }).run { client in
            let credentials = try await client.credentials()
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-1"), count: 12)
            #expect(first.last == 429)
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-2"), count: 11)
            #expect(second == Array(repeating: 200, count: 11))
            // Without a device header, the address is the key.
            let anonymous = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9"), count: 12)
            #expect(anonymous.last == 429)
        }
    }

    @Test("DCR register and token are throttled", arguments: ["/o/client/register", "/o/client/token"])
    func dcrEndpointsAreThrottled(path: String) async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            var headers = Self.forwarded("198.51.100.20")
            headers[.contentType] = "application/json"
            var statuses: [Int] = []
            for _ in 0..<12 {
                statuses.append(try await client.send(.post, path, headers: headers, body: "{}").status.code)
            }
            #expect(statuses.prefix(11).allSatisfy { $0 == 400 }, "\(statuses)")
            #expect(statuses.last == 429)
        }
    }

    @Test func the429LastsAtMostOneSecond() async throws {
        // The rate's request and the burst of 10, then 429s; "the throttling expires after one second of the first 429".
        let harness = Harness(Self.trustingForwardedFor)
        try await harness.run { client in
            let credentials = try await client.credentials()
            let address = Self.forwarded("192.0.2.50")
            #expect(try await Self.burst(client, credentials, address, count: 11) == Array(repeating: 200, count: 11))
            #expect(try await Self.burst(client, credentials, address, count: 1) == [429])
            // Retrying early keeps failing without pushing the end further out.
            for _ in 0..<4 {
                harness.clock.advance(by: .milliseconds(200))
                #expect(try await Self.burst(client, credentials, address, count: 1) == [429])
            }
            harness.clock.advance(by: .milliseconds(200))
            #expect(try await Self.burst(client, credentials, address, count: 1) == [200])
            // Waiting one second after a 429 always suffices.
            #expect(try await Self.burst(client, credentials, address, count: 1) == [429])
            harness.clock.advance(by: .seconds(1))
            #expect(try await Self.burst(client, credentials, address, count: 1) == [200])
        }
    }

    @Test(arguments: [false, true]) func thePeerAddressIsTheKeyAndForwardedForCountsOnlyWhenTrusted(trusted: Bool) async throws {
        try await Harness({
            $0.throttleKey = .ip
            $0.trustForwardedFor = trusted
        }).runLive { client in
            var statuses: [Int] = []
            for index in 0..<12 {
                statuses.append(try await client.send(.get, "/api/v1/tokens/authn?requestor=REF30&deviceId=d\(index)").status.code)
            }
            #expect(statuses.prefix(11).allSatisfy { $0 != 429 }, "\(statuses)")
            #expect(statuses.last == 429)
            // Another client address named behind the same peer: its own bucket only when the header is trusted (a
            // device cannot pick its address).
            let forwarded = try await client.send(.get, "/api/v1/tokens/authn?requestor=REF30&deviceId=x", headers: Self.forwarded("192.0.2.1"))
            #expect((forwarded.status == .tooManyRequests) == !trusted)
            // The stats count the one peer and the request that carried the header, trusted or not.
            let peers = try #require(try await client.send(.get, "/_sim/stats").json()["peers"] as? [String: Any])
            #expect(peers["distinct"] as? Int == 1)
            #expect(peers["forwarded_for_requests"] as? Int == 1)
            #expect(try await client.send(.delete, "/_sim/stats").status == .noContent)
            let reset = try #require(try await client.send(.get, "/_sim/stats").json()["peers"] as? [String: Any])
            #expect(reset["forwarded_for_requests"] as? Int == 0)
        }
    }

    @Test func theDefaultIgnoresForwardedFor() {
        #expect(!SimulatorConfiguration().trustForwardedFor)
    }

    @Test func theBucketTableStaysBoundedAndKeepsThrottledClients() {
        let clock = ManualClock()
        let throttle = Throttle(burst: 10, ratePerSecond: 1, clock: .manual(clock), maxBuckets: 100)
        // One client uses up its bucket.
        for _ in 0..<11 { #expect(throttle.allow("busy")) }
        #expect(!throttle.allow("busy"))
        // A flood of new addresses within the refill time.
        for index in 0..<1000 {
            _ = throttle.allow("flood-\(index)")
            #expect(throttle.bucketCount <= 100)
        }
        // The throttled client was not forgotten.
        #expect(!throttle.allow("busy"))
    }

    // MARK: Adobe's scenario table

    /// The rows of "Scenario example for throttling" in Adobe's throttling-mechanism.md
    /// (https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/throttling-mechanism):
    /// milliseconds since the first request, and whether the call succeeds.
    static let adobeScenario: [(at: Int64, answered: Bool)] = [
        (0, true), (300, true), (600, true), (900, true), (1200, true), (1300, true), (1400, true), (1500, true),
        (1600, true), (1700, true), (1800, true), (2100, true), (2200, true), (2400, false), (2600, false),
        (2800, false), (3100, true),
    ]

    @Test func adobesScenarioTableRowByRow() {
        let clock = ManualClock()
        let throttle = Throttle(burst: 10, ratePerSecond: 1, clock: .manual(clock))
        var elapsed: Int64 = 0
        for row in Self.adobeScenario {
            clock.advance(by: .milliseconds(row.at - elapsed))
            elapsed = row.at
            #expect(throttle.allow("client") == row.answered, "second \(Double(row.at) / 1000)")
        }
    }

    @Test func adobesScenarioTableOverHTTP() async throws {
        let harness = Harness(Self.trustingForwardedFor)
        try await harness.run { client in
            let credentials = try await client.credentials()
            let address = Self.forwarded("192.0.2.77")
            var elapsed: Int64 = 0
            for row in Self.adobeScenario {
                harness.clock.advance(by: .milliseconds(row.at - elapsed))
                elapsed = row.at
                let status = try await Self.burst(client, credentials, address, count: 1)
                #expect(status == [row.answered ? 200 : 429], "second \(Double(row.at) / 1000)")
            }
        }
    }
}
