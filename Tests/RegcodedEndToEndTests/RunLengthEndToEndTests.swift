import Foundation
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// `--duration` / `duration:` end a run gracefully and print its report; `--threshold` / `thresholds:` give the
    /// verdict as the exit status.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct RunLengthEndToEndTests {
        static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (status: Int32?, text: String) {
            let daemon = try ChildProcess(
                "regcoded",
                [
                    "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"), "--simulator-listen", "127.0.0.1:0",
                    "--simulator-auto-approve-after", "1", "--poll-interval", "3",
                ] + arguments
            )
            let status = await daemon.waitForExit(timeout: .seconds(60))
            return (status, daemon.text)
        }

        @Test func aTimedRunStopsByItselfReportsAndFailsOnAThreshold() async throws {
            let directory = try TemporaryDirectory()
            let failing = try await Self.run(
                ["--devices", "2", "--duration", "8s", "--threshold", "logins>=2", "--threshold", "onboarding_failures>0"],
                in: directory
            )
            #expect(failing.status == 99, "\(failing.text)")
            #expect(failing.text.contains("the run's duration has passed: stopping"))
            #expect(failing.text.contains("Thresholds: 1 of 3 failed"), "\(failing.text)")
            #expect(failing.text.contains("pass  logins>=2"))
            #expect(failing.text.range(of: "FAIL  onboarding_failures>0 +0\n", options: .regularExpression) != nil)
            // On by default: the emulator kept its schedule.
            #expect(failing.text.contains("pass  generator_behind_windows==0"))
            // Stopped gracefully: the log is whole.
            #expect(try SQLiteShell.run(directory.path("db.sqlite"), "PRAGMA integrity_check") == "ok")
        }

        @Test func aRunThatMeetsItsThresholdsFromTheConfigurationExitsZero() async throws {
            let directory = try TemporaryDirectory()
            try """
            duration: 8s
            thresholds:
              - http_5xx_rate<0.001
              - onboarding_failures==0
            fleets:
              - name: stb
                count: 2
            """.write(toFile: directory.path("soak.yaml"), atomically: true, encoding: .utf8)
            let passing = try await Self.run(["--config", directory.path("soak.yaml")], in: directory)
            #expect(passing.status == 0, "\(passing.text)")
            #expect(passing.text.contains("Thresholds: all 3 passed"), "\(passing.text)")
        }

        @Test func aBadThresholdOrDurationStopsTheStartWithExitTwo() async throws {
            let directory = try TemporaryDirectory()
            let bad = try await Self.run(["--threshold", "poll_lateness_p99<50"], in: directory)
            #expect(bad.status == 2 && bad.text.contains("--threshold") && bad.text.contains("give '50' a unit"), "\(bad.text)")
            let zero = try await Self.run(["--duration", "0s"], in: directory)
            #expect(zero.status == 2 && zero.text.contains("--duration"), "\(zero.text)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("db.sqlite")))
        }
    }
}
