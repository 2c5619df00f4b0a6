import Hummingbird
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
        try await Harness().run { client in
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
        let clock = ManualSimulatorClock()
        let throttle = Throttle(capacity: 10, refillPerSecond: 1, clock: .manual(clock))
        for index in 0..<1000 {
            #expect(throttle.allow("device-\(index)"))
        }
        #expect(throttle.bucketCount == 1000)
        clock.advance(by: .seconds(10))
        #expect(throttle.allow("late"))
        #expect(throttle.bucketCount == 1)
    }
}
