import ControlSocket
import Foundation
import RegcodeTestSupport
import Testing

/// Three real daemons on the shipped defaults against separately started pass-sims for three minutes: 500 polling
/// devices with the loopback default `client_address` (`bind`), 500 with `host`, and a cycle fleet (log in, hold,
/// authorize, log out). After a minute's warm-up none of them may grow its anonymous memory by 1 MB or more beyond
/// what SQLite's page caches take as the database grows (bounded by `cache_size`, and reported by
/// `daemon.status`): a per-poll leak shows as megabytes within the window (a closed backend connection once stayed
/// alive, about 2 KB a poll under `bind`: 24 MB in the window). The bound leaves room for the allocator's steps on a
/// machine busy with other work (a few hundred KB, seen while builds ran beside the test).
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(6))) struct MemorySoakEndToEndTests {
        /// A daemon's anonymous memory (RssAnon), in KB; nil once it has exited.
        static func anonymousKB(_ pid: Int32) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
                return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            }
            return nil
        }

        /// The least-squares growth of `samples` (seconds, KB) over their span, in KB: robust to the allocator's
        /// step-wise growth and release, unlike a difference of two samples.
        static func fittedGrowth(_ samples: [(seconds: Double, kb: Double)]) -> Double {
            let n = Double(samples.count)
            guard n >= 2 else { return 0 }
            let meanX = samples.map(\.seconds).reduce(0, +) / n
            let meanY = samples.map(\.kb).reduce(0, +) / n
            let den = samples.reduce(0) { $0 + ($1.seconds - meanX) * ($1.seconds - meanX) }
            guard den > 0 else { return 0 }
            let slope = samples.reduce(0) { $0 + ($1.seconds - meanX) * ($1.kb - meanY) } / den
            return slope * ((samples.last?.seconds ?? 0) - (samples.first?.seconds ?? 0))
        }

        struct Soaked {
            let name: String
            let daemon: ChildProcess
            let database: String
            let socket: String
        }

        static func start(_ name: String, fleet: String, sim: PassSimProcess, directory: TemporaryDirectory) throws -> Soaked {
            let config = directory.path("\(name).yaml")
            try """
            backend: \(sim.url)
            print_codes: false
            fleets:
            \(fleet)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("\(name).sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("\(name).sock"), "--software-statement", sim.statementFile]
            )
            return Soaked(name: name, daemon: daemon, database: database, socket: directory.path("\(name).sock"))
        }

        @Test func anonymousMemoryStaysFlatOnTheDefaultsForThreeMinutes() async throws {
            let directory = try TemporaryDirectory()
            // pass-sim on its defaults (Adobe's throttle included) for the `bind` fleet, whose devices each have their
            // own address; without the throttle for the `host` fleet, whose 500 devices share one (throttled, most of
            // them would still be registering when the window ends); one that approves every code after a second for
            // the cycle fleet.
            let sim = try await PassSimProcess.start()
            let unthrottled = try await PassSimProcess.start(["--no-throttle"])
            let approving = try await PassSimProcess.start(["--no-throttle", "--auto-approve-after", "1s"])
            let soaked = [
                try Self.start(
                    "bind",
                    fleet: """
                          - name: soak
                            count: 500
                            ramp: 5s
                        """,
                    sim: sim,
                    directory: directory
                ),
                try Self.start(
                    "host",
                    fleet: """
                          - name: soak
                            count: 500
                            ramp: 5s
                            client_address: host
                        """,
                    sim: unthrottled,
                    directory: directory
                ),
                try Self.start(
                    "cycle",
                    fleet: """
                          - name: soak
                            count: 200
                            ramp: 5s
                            scenario: cycle
                            poll:
                              interval: 3s
                            cycle:
                              hold: 3s
                              authorize_every: 1s
                              resource: REF30
                        """,
                    sim: approving,
                    directory: directory
                ),
            ]
            for daemon in soaked {
                try #require(await daemon.daemon.waitForOutput("regcoded ready", timeout: .seconds(60)), "\(daemon.name): \(daemon.daemon.text)")
            }

            let start = ContinuousClock.now
            let warmUp: Duration = .seconds(60)
            let window: Duration = .seconds(180)
            var samples: [String: [(seconds: Double, kb: Double)]] = [:]
            while ContinuousClock.now - start < window {
                try await Task.sleep(for: .seconds(5))
                let elapsed = ContinuousClock.now - start
                guard elapsed >= warmUp else { continue }
                for daemon in soaked {
                    let kb = try #require(Self.anonymousKB(daemon.daemon.pid), "\(daemon.name) exited: \(daemon.daemon.text)")
                    let status = try await ControlClient.withConnection(to: daemon.socket) { try await $0.call(method: "daemon.status") }
                    let sqliteKB = try #require(status["storage"]?["sqliteMemoryBytes"]?.intValue) / 1024
                    samples[daemon.name, default: []].append((Double(elapsed.components.seconds), Double(kb - Int(sqliteKB))))
                }
            }

            for daemon in soaked {
                let series = samples[daemon.name] ?? []
                let growth = Self.fittedGrowth(series)
                let polls = Int((try? SQLiteShell.run(daemon.database, "SELECT count(*) FROM poll_attempts")) ?? "") ?? 0
                print("\(daemon.name): anonymous memory outside SQLite \(Int(growth)) KB over the last two minutes; \(polls) polls in all")
                #expect(polls > 0, "\(daemon.name) polled")
                #expect(
                    growth < 1024,
                    "\(daemon.name): anonymous memory outside SQLite grew \(Int(growth)) KB in the last two minutes (\(series.map { Int($0.kb) }))"
                )
                daemon.daemon.signal(SIGTERM)
            }
            for daemon in soaked { #expect(await daemon.daemon.waitForExit() == 0, "\(daemon.name): \(daemon.daemon.text)") }
            let logins = Int((try? SQLiteShell.run(soaked[2].database, "SELECT count(*) FROM events WHERE name = 'setToken'")) ?? "") ?? 0
            #expect(logins > 0, "the cycle fleet logged in")
            for process in [sim.process, unthrottled.process, approving.process] { process.signal(SIGTERM) }
        }
    }
}
