import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeTestSupport
import Testing

/// A small fleet against a misbehaving backend: the polling contract must hold under faults.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(3))) struct FaultSoakTests {
        struct Poll {
            var device: String
            var code: String
            var sent: Int64
            var latency: Double
            var status: Int?
            var outcome: String
            var nextDelay: Int64?
        }

        /// Dropped connections and 5xx over HTTP/2 meet stream and connection handling, not only HTTP/1.1's.
        @Test(arguments: BackendWire.allCases) func fleetAuthenticatesUnderAFaultMixAndKeepsThePollingContract(wire: BackendWire) async throws {
            let directory = try TemporaryDirectory()
            let faults = directory.path("faults.json")
            let mix =
                #"{"error5xx":0.2,"throttle429":0.05,"throttle429RetryAfter":0.05,"retryAfterSeconds":3,"drop":0.05,"latencyMs":5,"latencySpreadMs":250}"#
            try #"{"poll":\#(mix),"sessions":\#(mix)}"#.write(toFile: faults, atomically: true, encoding: .utf8)
            let started = try await PassSimProcess.start(["--faults", faults, "--seed", "7", "--auto-approve-after", "8s"], wire: wire)
            let config = directory.path("regcoded.yaml")
            // A deliberately fast client (0.5 s) so the 1 s floor after a 429 is really exercised.
            try """
            backend: \(started.url)
            fleets:
              - name: soak
                count: 4
                poll:
                  interval: 500ms
                  misbehaving: true
                  backoff_cap: 4s
                  code_request_retries: 10
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock")] + started.daemonArguments
            )

            let authenticated = try await waitForLogins(4, in: database, daemon: daemon, timeout: .seconds(90))
            #expect(daemon.process.isRunning, "the daemon crashed: \(daemon.text)")
            #expect(authenticated == 4, "\(daemon.text.suffix(2000))")
            #expect(
                try SQLiteShell.run(
                    database,
                    "SELECT count(*) FROM events WHERE json_extract(args, '$.statusDictionary.errorId') IN ('REG410', 'REG500')"
                )
                    == "0"
            )

            let rows = try SQLiteShell.run(
                database,
                "SELECT device, code, sent_at, latency_ms, ifnull(http_status, ''), outcome, ifnull(next_delay_ms, '') FROM poll_attempts ORDER BY device, sent_at"
            )
            let polls = rows.split(separator: "\n").map { line -> Poll in
                let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                return Poll(
                    device: f[0],
                    code: f[1],
                    sent: Int64(f[2])!,
                    latency: Double(f[3])!,
                    status: Int(f[4]),
                    outcome: f[5],
                    nextDelay: Int64(f[6])
                )
            }
            #expect(polls.count > 20)
            let outcomes = Set(polls.map(\.outcome))
            // 5xx (20 %) and 429 (injected, and the simulator's own bucket against a 0.5 s client) always
            // show up; dropped connections (5 %) may not in a run this short, so they are not required.
            #expect(outcomes.contains("server-error") && outcomes.contains("throttled"), "\(outcomes)")

            var backoffsSeen = 0
            var longRetryAfterWaits = 0
            for (previous, next) in zip(polls, polls.dropFirst()) where previous.device == next.device && previous.code == next.code {
                let answeredAt = Double(previous.sent) + previous.latency
                // One request in flight: the next poll leaves only after the previous answer came back.
                #expect(Double(next.sent) >= answeredAt - 1, "overlapping polls on \(next.device)")
                if previous.outcome == "throttled" {
                    // Never sooner than 1 s after a 429 (3 s when it carried Retry-After: 3).
                    #expect(Double(next.sent) - answeredAt >= 999, "poll \(Double(next.sent) - answeredAt) ms after a 429")
                    if Double(next.sent) - answeredAt >= 2999 { longRetryAfterWaits += 1 }
                }
                if ["server-error", "transport-error"].contains(previous.outcome), let delay = previous.nextDelay, delay > 550 {
                    backoffsSeen += 1
                }
            }
            #expect(backoffsSeen > 0, "backoff is visible in the poll log")
            #expect(longRetryAfterWaits > 0, "Retry-After was honoured at least once")

            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
