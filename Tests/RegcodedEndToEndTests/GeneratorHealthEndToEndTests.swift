import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// An emulator that cannot keep its own schedule says so — in `daemon.status` while it runs, first in the run's
    /// report — and its timed run fails by default, whatever its other thresholds.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct GeneratorHealthEndToEndTests {
        @Test func anOverloadedEmulatorSaysSoFirstAndItsRunFailsByDefault() async throws {
            // Every answer takes 700 ms and only one call may be in flight: twelve devices polling every 3 s
            // need about 4 calls a second and get fewer than 1.5, so their polls go out later and later.
            let backend = try await PassSimProcess.start(["--latency", "700", "--no-throttle"])
            let directory = try TemporaryDirectory()
            try """
            max_concurrent_requests: 1
            fleets:
              - name: stb
                count: 12
                poll: {interval: 3s}
            """.write(toFile: directory.path("soak.yaml"), atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "regcoded",
                backend.daemonArguments + [
                    "--config", directory.path("soak.yaml"), "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"),
                    "--duration", "25s", "--threshold", "http_5xx_rate<0.5",
                ]
            )
            var behind: JSONValue?
            let deadline = ContinuousClock.now + .seconds(24)
            while ContinuousClock.now < deadline, behind == nil {
                if let status = try? await ControlClient.withConnection(to: directory.path("s.sock"), { try await $0.call(method: "daemon.status") }),
                    status["generator"]?["behind"] == true
                {
                    behind = status["generator"]
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            let generator = try #require(behind, "daemon.status never said the emulator was behind: \(daemon.text)")
            #expect(generator["reasons"]?.arrayValue?.contains("calls-at-cap") == true, "\(generator)")
            #expect(await daemon.waitForExit(timeout: .seconds(60)) == 99, "\(daemon.text)")
            #expect(daemon.text.contains("the emulator is falling behind its own schedule"))
            // The report's headline leads with it, and the default threshold fails the run.
            let report = try #require(daemon.text.range(of: "regcoded soak report").map { String(daemon.text[$0.lowerBound...]) })
            let trouble = try #require(report.split(separator: "\n").first { $0.hasPrefix("trouble: ") })
            #expect(trouble.hasPrefix("trouble: The emulator fell behind its own schedule"), "\(report)")
            #expect(report.range(of: "FAIL  generator_behind_windows==0 +[1-9]", options: .regularExpression) != nil, "\(report)")
            #expect(report.contains("pass  http_5xx_rate<0.5"), "\(report)")
        }
    }
}
