import ControlSocket
import Foundation
import RegcodeEngine
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct MetricsTests {
        /// `name{labels} value` lines of a Prometheus text exposition, keyed by `name{labels}`.
        static func parse(_ text: String) -> [String: Double] {
            var samples: [String: Double] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                samples[String(line[..<space])] = value
            }
            return samples
        }

        @Test func metricsEndpointIsScrapedAndParsed() async throws {
            let directory = try TemporaryDirectory()
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", directory.path("db.sqlite"), "--socket", socket, "--simulator-listen", "127.0.0.1:0",
                    "--simulator-auto-approve-after", "1", "--poll-interval", "3", "--devices", "2", "--metrics", "127.0.0.1:0",
                ]
            )
            // Port 0: the daemon logs the address it bound.
            let marker = "metrics.url=http://127.0.0.1:"
            try #require(await daemon.waitForOutput(marker), "\(daemon.text)")
            let after = try #require(daemon.text.range(of: marker)).upperBound
            let port = try #require(Int(daemon.text[after...].prefix { $0.isNumber }))
            var samples: [String: Double] = [:]
            let deadline = ContinuousClock.now + .seconds(40)
            while ContinuousClock.now < deadline {
                if let (data, _) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!) {
                    samples = Self.parse(String(decoding: data, as: UTF8.self))
                    if samples[#"regcoded_devices{state="authenticated"}"#] == 2 { break }
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(samples[#"regcoded_devices{state="authenticated"}"#] == 2, "\(daemon.text)")
            #expect(samples["regcoded_codes_issued_total"] == 2)
            #expect((samples[#"regcoded_polls_total{outcome="authenticated",status="200"}"#] ?? 0) == 2)
            #expect((samples[#"regcoded_polls_total{outcome="pending",status="200"}"#] ?? 0) >= 2)
            #expect(samples["regcoded_time_to_authenticate_seconds_count"] == 2)
            #expect((samples["regcoded_poll_latency_seconds_count"] ?? 0) >= 4)
            #expect(samples.keys.contains { $0.hasPrefix("regcoded_poll_lateness_seconds_bucket{le=") })
            #expect((samples[#"regcoded_events_total{name="status"}"#] ?? 0) == 2)
            #expect(samples["regcoded_subscribers"] == 0)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        @Test func presetsAndRampComeFromTheConfigFile() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try """
            simulator:
              listen: 127.0.0.1:0
            fleets:
              - name: slow
                count: 1
                scenario: idle
                poll:
                  preset: accessenabler
              - name: bad
                count: 3
                scenario: idle
                ramp: 9s
                poll:
                  preset: misbehaving-no-pause
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess("regcoded", ["--config", config, "--database", directory.path("db.sqlite"), "--socket", socket])
            var counts: [Int] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                if let list = try? await ControlClient.withConnection(to: socket, { try await $0.call(method: "devices.list") }) {
                    let count = list["devices"]?.arrayValue?.count ?? 0
                    if counts.last != count { counts.append(count) }
                    if count == 4 { break }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            // The ramp added the three misbehaving devices one by one (3 s apart) after the first fleet.
            #expect(counts.last == 4)
            #expect(counts.count >= 2 && counts[0] < 4, "\(counts)")
            let slow = try await ControlClient.withConnection(to: socket) { try await $0.call(method: "devices.get", params: ["device": "slow-1"]) }
            #expect(slow["pollInterval"] == 10)
            let bad = try await ControlClient.withConnection(to: socket) { try await $0.call(method: "devices.get", params: ["device": "bad-1"]) }
            #expect(bad["pollInterval"] == 0)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
