import Foundation
import RegcodeTestSupport
import Testing

/// Real regcoded against a real pass-sim that throttles, fails and forgets, at every stage.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(6))) struct HostileBackendEndToEndTests {
        /// One backend request of a device, from either log.
        struct Request {
            var device: String
            var sent: Double
            var latency: Double
            var outcome: String
            var answered: Double { sent + latency }
        }

        static func authenticatedDevices(_ database: String) -> Int {
            Int(
                (try? SQLiteShell.run(
                    database,
                    "SELECT count(DISTINCT device) FROM events WHERE name = 'setAuthenticationStatus' AND json_extract(args, '$.status') = 1"
                )) ?? ""
            ) ?? 0
        }

        static func waitForAuthenticated(_ count: Int, database: String, daemon: ChildProcess, within limit: Duration) async throws -> Int {
            var authenticated = 0
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline, authenticated < count, daemon.process.isRunning {
                authenticated = authenticatedDevices(database)
                try await Task.sleep(for: .milliseconds(500))
            }
            return authenticatedDevices(database)
        }

        /// Every request of every device, polls and the rest, in the order each device sent them.
        static func requests(_ database: String) throws -> [Request] {
            let rows = try SQLiteShell.run(
                database,
                """
                SELECT device, sent_at, latency_ms, outcome FROM poll_attempts
                UNION ALL SELECT device, sent_at, latency_ms, outcome FROM request_attempts
                ORDER BY 1, 2
                """
            )
            return rows.split(separator: "\n").map { line in
                let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                return Request(device: f[0], sent: Double(f[1])!, latency: Double(f[2])!, outcome: f[3])
            }
        }

        @Test func twoHundredDevicesLogInAgainstFaultsOnEveryEndpointClass() async throws {
            let directory = try TemporaryDirectory()
            let faults = directory.path("faults.json")
            let mix =
                #"{"error5xx":0.2,"throttle429":0.05,"throttle429RetryAfter":0.05,"retryAfterSeconds":2,"drop":0.05,"latencyMs":5,"latencySpreadMs":400}"#
            // A throttled configuration or decision reaches an SDK app at once as CFG429 / Z100 (Adobe's throttling
            // page), with nothing to retry: those classes get the same mix without 429s.
            let unthrottled = #"{"error5xx":0.3,"drop":0.05,"latencyMs":5,"latencySpreadMs":400}"#
            let classes = ["dcr": mix, "config": unthrottled, "sessions": mix, "poll": mix, "decisions": unthrottled, "other": mix]
            try ("{" + classes.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}").write(
                toFile: faults,
                atomically: true,
                encoding: .utf8
            )
            let sim = try await PassSimProcess.start(["--faults", faults, "--seed", "11", "--auto-approve-after", "4s"])
            let config = directory.path("regcoded.yaml")
            // Bounds high enough that 35 % failures never spend them (0.35^15 per stage); short caps keep the run short.
            try """
            backend: \(sim.url)
            fleets:
              - name: hostile
                count: 200
                poll:
                  interval: 3s
                  backoff_cap: 6s
                  stage_retries: 14
                  code_request_retries: 14
                  stage_backoff_cap: 4s
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock"), "--software-statement", sim.statementFile]
            )

            let authenticated = try await Self.waitForAuthenticated(200, database: database, daemon: daemon, within: .seconds(240))
            #expect(daemon.process.isRunning, "the daemon crashed: \(daemon.text.suffix(2000))")
            #expect(authenticated == 200, "\(daemon.text.suffix(2000))")
            let failures = try SQLiteShell.run(
                database,
                "SELECT count(*) FROM events WHERE json_extract(args, '$.statusDictionary.errorId') IN ('R400', 'R401', 'REG500', 'REG410') OR json_extract(args, '$.statusDictionary.errorId') LIKE 'CFG%'"
            )
            #expect(failures == "0")

            // Faults hit every stage, and every stage retried its way through them.
            let stages = try SQLiteShell.run(
                database,
                "SELECT DISTINCT stage FROM request_attempts WHERE outcome IN ('throttled', 'server-error', 'transport-error') AND retry_delay_ms IS NOT NULL ORDER BY stage"
            )
            #expect(stages.split(separator: "\n") == ["configuration", "registration", "session", "token"], "\(stages)")

            let requests = try Self.requests(database)
            var throttledFollowUps = 0
            for (previous, next) in zip(requests, requests.dropFirst()) where previous.device == next.device {
                // One request in flight per device, across polls and every other stage.
                // Both times are wall-clock milliseconds, each rounded once (±0.5 ms), so in-order calls can read
                // up to 1 ms apart the wrong way round.
                #expect(next.sent >= previous.answered - 1.5, "overlapping requests on \(next.device)")
                if previous.outcome == "throttled" {
                    throttledFollowUps += 1
                    #expect(next.sent - previous.answered >= 999, "a request \(next.sent - previous.answered) ms after a 429 on \(next.device)")
                }
            }
            #expect(throttledFollowUps > 0)

            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }

        /// A throttled `setRequestor` reaches an SDK app as `CFG429` within seconds, after one request, as Adobe's
        /// throttling page says the SDK reports it; a native app retries the throttled launch check twice, a second
        /// or more apart, and says so (`app.throttled`, then `app.callFailed`).
        @Test func aThrottledOpeningIsReportedAsEachPersonaDoes() async throws {
            let directory = try TemporaryDirectory()
            let faults = directory.path("faults.json")
            try #"{"config":{"throttle429":1.0},"other":{"throttle429":1.0}}"#.write(toFile: faults, atomically: true, encoding: .utf8)
            let sim = try await PassSimProcess.start(["--faults", faults])
            for persona in ["accessenabler", "rest-v2"] {
                let database = directory.path("\(persona).sqlite")
                let daemon = try ChildProcess(
                    "regcoded",
                    sim.daemonArguments + [
                        "--persona", persona, "--devices", "1", "--database", database, "--socket", directory.path("\(persona).sock"),
                    ]
                )
                let expected = persona == "accessenabler" ? "status" : "app.callFailed"
                var seen = ""
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline, !seen.contains(expected) {
                    seen = (try? SQLiteShell.run(database, "SELECT group_concat(name, ' ') FROM events")) ?? ""
                    if !seen.contains(expected) { try await Task.sleep(for: .milliseconds(200)) }
                }
                if persona == "accessenabler" {
                    let status = try SQLiteShell.run(
                        database,
                        "SELECT json_extract(args, '$.statusDictionary.errorId') FROM events WHERE name = 'status'"
                    )
                    #expect(status == "CFG429", "\(daemon.text.suffix(1_000))")
                    let sent = try SQLiteShell.run(database, "SELECT count(*) FROM request_attempts WHERE endpoint = 'configuration'")
                    #expect(sent == "1")
                } else {
                    #expect(seen == "app.throttled app.throttled app.callFailed", "\(seen)")
                    let gaps = try SQLiteShell.run(
                        database,
                        "SELECT min(sent_at - previous) FROM (SELECT sent_at, lag(sent_at) OVER (ORDER BY id) AS previous FROM request_attempts WHERE endpoint = 'profiles') WHERE previous IS NOT NULL"
                    )
                    #expect((Int(gaps) ?? 0) >= 1_000, "shortest wait after a 429: \(gaps) ms")
                }
                daemon.signal(SIGTERM)
                _ = await daemon.waitForExit()
            }
        }

        @Test func everyDeviceRecoversFromABackendRestartedEmptyMidSoak() async throws {
            let directory = try TemporaryDirectory()
            // Port 0 first; the restart takes the same port back, as a restarted backend would.
            let firstSim = try await PassSimProcess.start()
            let first = firstSim.process
            let port = try #require(firstSim.url.split(separator: ":").last.flatMap { Int($0) })
            let config = directory.path("regcoded.yaml")
            try """
            backend: http://127.0.0.1:\(port)
            fleets:
              - name: soak
                count: 50
                poll:
                  interval: 3s
                  backoff_cap: 4s
                  stage_backoff_cap: 4s
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock"), "--software-statement", firstSim.statementFile]
            )

            // Every device shows a code and polls it, unapproved.
            let deadline = ContinuousClock.now + .seconds(60)
            var codes = 0
            while ContinuousClock.now < deadline, codes < 50 {
                codes = Int((try? SQLiteShell.run(database, "SELECT count(DISTINCT device) FROM poll_attempts")) ?? "") ?? 0
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(codes == 50)

            // The backend dies and comes back empty: clients, tokens and codes are gone.
            first.signal(SIGKILL)
            _ = await first.waitForExit()
            try await Task.sleep(for: .seconds(2))
            // The same statement key: the daemon's statement stays valid, as Adobe's does across a restart.
            let second = try ChildProcess(
                "pass-sim",
                ["--listen", "127.0.0.1:\(port)", "--statement-key", firstSim.statementKeyFile, "--auto-approve-after", "2s"]
            )
            #expect(await second.waitForOutput("/activate"), "pass-sim did not restart: \(second.text)")

            let authenticated = try await Self.waitForAuthenticated(50, database: database, daemon: daemon, within: .seconds(120))
            #expect(authenticated == 50, "\(daemon.text.suffix(2000))")
            let registrations = try SQLiteShell.run(
                database,
                "SELECT count(*) FROM request_attempts WHERE stage = 'registration' AND outcome = 'ok'"
            )
            #expect(registrations == "100", "each device registered once, then once again")
            let regcodes = try SQLiteShell.run(
                database,
                "SELECT count(*) FROM events WHERE json_extract(args, '$.statusDictionary.errorId') = 'REGCODE'"
            )
            #expect(regcodes == "100", "each device got one new code")

            // The report makes the recovery visible.
            let report = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--database", database, "--format", "json"])
            #expect(report.status == 0, "\(report.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            let onboarding = (json?["fleet"] as? [String: Any])?["onboarding"] as? [String: Any]
            #expect(onboarding?["re_registrations"] as? Int == 50, "\(onboarding ?? [:])")
            #expect(onboarding?["new_codes"] as? Int == 50, "\(onboarding ?? [:])")
            #expect(onboarding?["failed_onboardings"] as? Int == 0, "\(onboarding ?? [:])")

            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            second.signal(SIGTERM)
            _ = await second.waitForExit()
        }
    }
}
