import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// Start-up is as durable as the steady state, with the real daemon and a real pass-sim that keeps a state file (its
/// records count what the backend issued): a device sends its next backend call only once what it got before (a
/// registration, a code, a poll's answer) is stored, so a kill never leaves the backend with work the device moved on
/// from and the database lacks.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(4))) struct StartupDurabilityEndToEndTests {
        static func fleet(count: Int, ramp: String?) -> String {
            """
            fleets:
              - name: lab
                count: \(count)
            \(ramp.map { "    ramp: \($0)\n" } ?? "")    poll:
                  interval: 3s
            """
        }

        /// 0 before the file or its tables exist (a kill before the schema was written); any other failure is the
        /// test's own mistake and fails it.
        static func count(_ database: String, _ sql: String) -> Int {
            guard FileManager.default.fileExists(atPath: database) else { return 0 }
            do {
                return Int(try SQLiteShell.run(database, sql)) ?? 0
            } catch {
                if !"\(error)".contains("no such table") { Issue.record("\(sql): \(error)") }
                return 0
            }
        }

        static func lines(_ database: String, _ sql: String) -> Set<String> {
            guard FileManager.default.fileExists(atPath: database) else { return [] }
            return Set(((try? SQLiteShell.run(database, sql)) ?? "").split(separator: "\n").map(String.init))
        }

        /// Polls pass-sim answered (not the dropped ones).
        static func answeredPolls(_ sim: PassSimProcess) async throws -> Int {
            let stats = try JSONValueParser.parse(try await sim.request("/_sim/stats").body)
            let byStatus = stats["requests"]?["poll"]?.objectValue ?? [:]
            return byStatus.filter { $0.key != "dropped" }.values.reduce(0) { $0 + Int($1.intValue ?? 0) }
        }

        /// While the database takes no write, devices starting one by one get no further than their first answer: no
        /// token, no code, no poll is asked for on a step the database does not hold. Once it takes writes again, every
        /// device goes on where it stopped (one registration each).
        @Test func aDeviceGoesNoFurtherThanWhatIsStored() async throws {
            let directory = try TemporaryDirectory()
            let simState = directory.path("sim.sqlite")
            let sim = try await PassSimProcess.start(["--state", simState, "--auto-approve-after", "1s", "--no-throttle"])
            let config = directory.path("regcoded.yaml")
            try Self.fleet(count: 4, ramp: "2s").write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock")] + sim.daemonArguments
            )
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            let lock = try EndToEnd.StorageFaultEndToEndTests.ExclusiveLock(database: database)
            // What the first device may have stored before the lock: the backend may have gone that far, no further.
            let registrations = Int(lock.value("SELECT count(*) FROM client_credentials")) ?? -1
            let tokens = Int(lock.value("SELECT count(*) FROM access_tokens")) ?? -1
            let codes = Int(lock.value("SELECT count(*) FROM codes")) ?? -1
            // Every device starts within the ramp; one that went on would ask for its token, configuration and code
            // within milliseconds of its registration.
            try await Task.sleep(for: .seconds(3))
            #expect(registrations >= 0 && tokens >= 0 && codes >= 0)
            #expect(Self.count(simState, "SELECT count(*) FROM access_token") <= registrations, "tokens were issued on unstored registrations")
            #expect(Self.count(simState, "SELECT count(*) FROM code") <= tokens, "codes were issued on unstored steps")
            let answered = try await Self.answeredPolls(sim)
            #expect(codes > 0 || answered == 0, "polls were answered for unstored codes")
            lock.release()
            for _ in 0..<600 where Self.count(simState, "SELECT count(*) FROM code") < 4 && daemon.process.isRunning {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(Self.count(simState, "SELECT count(*) FROM code") == 4, "\(daemon.text)")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            #expect(Self.count(simState, "SELECT count(*) FROM client") == 4)
            #expect(Self.count(database, "SELECT count(*) FROM client_credentials") == 4)
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }

        /// What the backend issued, and what the database holds of it: stored answers, and requests stored in flight
        /// (written before they were sent; at the next start logged as `interrupted`), counted once each.
        struct Accounts: CustomStringConvertible {
            var issued: [String: Int] = [:]
            var accounted: [String: Int] = [:]

            /// Kinds the backend issued more of than the database holds.
            var unaccounted: [String] { issued.keys.sorted().filter { issued[$0, default: 0] > accounted[$0, default: 0] } }
            var description: String { issued.keys.sorted().map { "\($0) \(issued[$0]!)/\(accounted[$0] ?? 0)" }.joined(separator: ", ") }
        }

        /// Requests of one kind (`condition` on stage or endpoint) stored in flight, or logged as interrupted since
        /// (polls: the whole poll log, which has no stage column).
        static func inFlight(_ database: String, _ condition: String, log: String) -> Int {
            let logged = log == "poll_attempts" ? "1" : condition
            return count(
                database,
                """
                SELECT count(*) FROM (SELECT device, sent_at FROM \(log) WHERE outcome = 'interrupted' AND \(logged)
                UNION SELECT device, sent_at FROM requests_in_flight WHERE \(condition))
                """
            )
        }

        static func accounts(_ database: String, simState: String, sim: PassSimProcess) async throws -> Accounts {
            var accounts = Accounts()
            accounts.issued["registrations"] = count(simState, "SELECT count(*) FROM client")
            accounts.accounted["registrations"] =
                count(database, "SELECT count(*) FROM request_attempts WHERE stage = 'registration' AND outcome = 'ok'")
                + inFlight(database, "stage = 'registration'", log: "request_attempts")
            accounts.issued["codes"] = count(simState, "SELECT count(*) FROM code")
            accounts.accounted["codes"] =
                count(database, "SELECT count(*) FROM codes") + inFlight(database, "endpoint = 'sessions'", log: "request_attempts")
            accounts.issued["polls"] = try await answeredPolls(sim)
            accounts.accounted["polls"] =
                count(database, "SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL")
                + inFlight(database, "stage = 'poll'", log: "poll_attempts")
            return accounts
        }

        static func interrupted(_ database: String) -> Int {
            count(
                database,
                "SELECT (SELECT count(*) FROM poll_attempts WHERE outcome = 'interrupted') + (SELECT count(*) FROM request_attempts WHERE outcome = 'interrupted')"
            )
        }

        /// Twenty SIGKILLs 0–0.4 s after the exec (Benchmarks/start-kills.sh runs a hundred, with figures): after every
        /// kill each registration, code and answered poll the backend issued is in the database, as the stored answer
        /// or as its request stored in flight (the answer was on its way when the kill came); no registration the
        /// backend gave a token to is missing. The next start logs what was left in flight as interrupted.
        @Test func twentyKillsAtStartUpLeaveNoUsedRegistrationUnstored() async throws {
            let directory = try TemporaryDirectory()
            let simState = directory.path("sim.sqlite")
            let sim = try await PassSimProcess.start(["--state", simState, "--auto-approve-after", "1s", "--no-throttle"])
            let config = directory.path("regcoded.yaml")
            try Self.fleet(count: 20, ramp: nil).write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            for kill in 0..<20 {
                let daemon = try ChildProcess(
                    "regcoded",
                    ["--config", config, "--database", database, "--socket", directory.path("s.sock")] + sim.daemonArguments
                )
                // Spread over 0–0.4 s, the same moments on every run.
                try await Task.sleep(for: .milliseconds((kill * 157) % 400))
                daemon.signal(SIGKILL)
                _ = await daemon.waitForExit()
                let accounts = try await Self.accounts(database, simState: simState, sim: sim)
                #expect(accounts.unaccounted.isEmpty, "kill \(kill): issued/accounted \(accounts)")
            }
            let inFlight = Self.count(database, "SELECT count(*) FROM requests_in_flight")
            let interruptedBefore = Self.interrupted(database)
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", directory.path("s.sock")]
                    + sim.daemonArguments
            )
            try #require(await daemon.waitForOutput("regcoded ready"), "\(daemon.text)")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            #expect(Self.interrupted(database) == interruptedBefore + inFlight)
            #expect(inFlight == 0 || daemon.text.contains("logged as interrupted"), "\(daemon.text)")
            #expect(Self.count(database, "SELECT count(*) FROM requests_in_flight") == 0, "a graceful stop leaves nothing in flight")
            let used = Self.lines(simState, "SELECT DISTINCT client_id FROM access_token")
            let kept = Self.lines(database, "SELECT client_id FROM client_credentials")
            #expect(used.subtracting(kept).isEmpty, "the backend gave tokens to \(used.subtracting(kept).count) unstored registrations")
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }
    }
}
