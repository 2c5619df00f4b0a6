import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// Real regcoded against a real pass-sim whose fault injection answers with Adobe's enhanced errors (or an
/// edge's HTML page): the device does what the `action` asks, on every call.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct ErrorActionEndToEndTests {
        typealias Lab = DaemonEndToEndTests.Lab

        static func next(_ events: inout ControlClient.Notifications.Iterator, _ name: String) async -> JSONValue? {
            await DaemonEndToEndTests.nextEvent(&events) { $0["name"]?.stringValue == name }
        }

        static func status(_ events: inout ControlClient.Notifications.Iterator, _ id: String) async -> JSONValue? {
            await DaemonEndToEndTests.nextEvent(&events) { $0["name"] == "status" && $0["args"]?["statusDictionary"]?["errorId"]?.stringValue == id }
        }

        /// pass-sim's count of answers of `endpointClass` with `status`.
        static func answered(_ lab: Lab, _ endpointClass: String, _ status: String) async throws -> Int {
            let stats = try JSONValueParser.parse(try await lab.backend.request("/_sim/stats").body)
            return Int(stats["requests"]?[endpointClass]?[status]?.intValue ?? 0)
        }

        @Test func aPersistentServerErrorWithActionNoneOnAuthorizationReachesTheAppAtOnceAndHoldsNothing() async throws {
            let lab = try await Lab.start(simulatorArguments: ["--no-throttle"])
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                try await lab.approveShownCode(&events)

                let faults = #"{"decisions":{"error5xx":1,"error5xxStatuses":[500],"errorAction":"none"}}"#
                #expect(try await lab.backend.request("/_sim/faults", method: "PUT", json: faults).status == 200)
                // The preauthorization waits behind the authorization in the device's one request slot.
                _ = try await client.call(method: "checkAuthorization", params: ["device": "stb-1", "resource": "Live"])
                _ = try await client.call(method: "checkPreauthorizedResources", params: ["device": "stb-1", "resources": ["Live"]])

                let z120 = try #require(await Self.status(&events, "Z120"))
                #expect(
                    z120["args"]?["statusDictionary"]?["message"] == "HTTP 500 internal_server_error: The request failed (internal_server_error)."
                )
                let failed = try #require(await Self.next(&events, "tokenRequestFailed"))
                #expect(failed["args"]?["errorCode"] == "Generic Authorization Error")
                _ = try #require(await Self.status(&events, "P100"))
                let preauthorized = try #require(await Self.next(&events, "preauthorizedResources"))
                #expect(preauthorized["args"] == ["resources": []])

                // One answer each, none retried: 8 retries of a 500 would have taken a minute.
                #expect(try await Self.answered(lab, "decisions", "500") == 2)
                let retried = try SQLiteShell.run(
                    lab.database,
                    "SELECT count(*) FROM request_attempts WHERE stage = 'decision' AND retry_delay_ms IS NOT NULL"
                )
                #expect(retried == "0")
                #expect(try await client.call(method: "daemon.status")["devices"]?.intValue == 1)
            }
        }

        @Test func anHTMLForbiddenOnPollsEndsTheLoopAtOnceWithREG500() async throws {
            let lab = try await Lab.start(simulatorArguments: ["--no-throttle"])
            try await ControlClient.withConnection(to: lab.socket) { client in
                _ = try await client.call(method: "subscribe", params: ["since": 0])
                var events = client.notifications.makeAsyncIterator()
                _ = try #require(await DaemonEndToEndTests.nextEvent(&events, where: DaemonEndToEndTests.isRegcode))
                #expect(try await lab.backend.request("/_sim/faults", method: "PUT", json: #"{"poll":{"error4xx":1}}"#).status == 200)

                let failed = try #require(await Self.status(&events, "REG500"))
                #expect(failed["args"]?["statusDictionary"]?["message"] == "HTTP 403")
                let ended = try #require(await Self.next(&events, "setAuthenticationStatus"))
                #expect(ended["args"] == ["status": 0, "errorCode": "Generic Authentication Error"])
                // The loop ended on the first refused poll, not when the code expired.
                #expect(try await Self.answered(lab, "poll", "403") == 1)
                let expired = try SQLiteShell.run(
                    lab.database,
                    "SELECT count(*) FROM events WHERE json_extract(args, '$.statusDictionary.errorId') = 'REG410'"
                )
                #expect(expired == "0")
            }
        }
    }
}
