import Hummingbird
import RegcodeTestSupport
import Testing

@testable import PassSimulator

@Suite("Throttling")
struct ThrottleTests {
    static let openrestyBody =
        "<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1></center><hr><center>openresty</center></body></html>"

    @Test func burstOfTenThenTooManyRequests() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials, device: "busy-tv")
            for attempt in 1...10 {
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
            for _ in 1...10 {
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

    @Test func configuredCapacityAndRefill() async throws {
        let harness = Harness {
            $0.throttleCapacity = 3
            $0.throttleRefillPerSecond = 2
        }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials, device: "tv")
            let path = "/api/v2/REF30/configuration"
            for _ in 1...3 { #expect(try await client.send(.get, path, headers: headers).status == .ok) }
            #expect(try await client.send(.get, path, headers: headers).status == .tooManyRequests)
            harness.clock.advance(by: .milliseconds(500))
            #expect(try await client.send(.get, path, headers: headers).status == .ok)
            #expect(try await client.send(.get, path, headers: headers).status == .tooManyRequests)
        }
    }

    @Test func idleBucketsAreEvicted() {
        let clock = ManualClock()
        let throttle = Throttle(capacity: 10, refillPerSecond: 1, clock: .manual(clock))
        for index in 0..<1000 {
            #expect(throttle.allow("device-\(index)"))
        }
        #expect(throttle.bucketCount == 1000)
        clock.advance(by: .seconds(10))
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
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.1"), count: 11)
            #expect(first == Array(repeating: 200, count: 10) + [429])
            // Only the first address of the list counts: the proxy's own address is shared by both.
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.2"), count: 10)
            #expect(second == Array(repeating: 200, count: 10))
        }
    }

    @Test func oneAddressSharesItsBucketAcrossDevicesInIPMode() async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            let credentials = try await client.credentials()
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-1"), count: 6)
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-2"), count: 5)
            #expect(first + second == Array(repeating: 200, count: 10) + [429])
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
            let first = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-1"), count: 11)
            #expect(first.last == 429)
            let second = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9", device: "tv-2"), count: 10)
            #expect(second == Array(repeating: 200, count: 10))
            // Without a device header, the address is the key.
            let anonymous = try await Self.burst(client, credentials, Self.forwarded("203.0.113.9"), count: 11)
            #expect(anonymous.last == 429)
        }
    }

    @Test("DCR register and token are throttled", arguments: ["/o/client/register", "/o/client/token"])
    func dcrEndpointsAreThrottled(path: String) async throws {
        try await Harness(Self.trustingForwardedFor).run { client in
            var headers = Self.forwarded("198.51.100.20")
            headers[.contentType] = "application/json"
            var statuses: [Int] = []
            for _ in 0..<11 {
                statuses.append(try await client.send(.post, path, headers: headers, body: "{}").status.code)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == 400 }, "\(statuses)")
            #expect(statuses.last == 429)
        }
    }

    @Test func the429LastsAtMostOneSecond() async throws {
        // Adobe's scenario: a burst of 10, then 429s; "the throttling expires after one second of the first 429".
        let harness = Harness(Self.trustingForwardedFor)
        try await harness.run { client in
            let credentials = try await client.credentials()
            let address = Self.forwarded("192.0.2.50")
            #expect(try await Self.burst(client, credentials, address, count: 10) == Array(repeating: 200, count: 10))
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
            for index in 0..<11 {
                statuses.append(try await client.send(.get, "/api/v1/tokens/authn?requestor=REF30&deviceId=d\(index)").status.code)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 != 429 }, "\(statuses)")
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
        let throttle = Throttle(capacity: 10, refillPerSecond: 1, clock: .manual(clock), maxBuckets: 100)
        // One client uses up its bucket.
        for _ in 0..<10 { #expect(throttle.allow("busy")) }
        #expect(!throttle.allow("busy"))
        // A flood of new addresses within the refill time.
        for index in 0..<1000 {
            _ = throttle.allow("flood-\(index)")
            #expect(throttle.bucketCount <= 100)
        }
        // The throttled client was not forgotten.
        #expect(!throttle.allow("busy"))
    }
}
