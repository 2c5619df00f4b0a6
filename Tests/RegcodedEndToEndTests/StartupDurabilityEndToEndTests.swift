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

        static func count(_ database: String, _ sql: String) -> Int {
            guard FileManager.default.fileExists(atPath: database) else { return 0 }
            return (try? SQLiteShell.run(database, sql)).flatMap { Int($0) } ?? 0
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
            // Every device starts within the ramp; one that went on would ask for its token, configuration and code
            // within milliseconds of its registration.
            try await Task.sleep(for: .seconds(3))
            #expect(Self.count(simState, "SELECT count(*) FROM access_token") == 0, "tokens were issued on unstored registrations")
            #expect(Self.count(simState, "SELECT count(*) FROM code") == 0, "codes were issued on unstored steps")
            #expect(try await Self.answeredPolls(sim) == 0)
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

        /// Twenty SIGKILLs 0–0.4 s after the exec (Benchmarks/start-kills.sh runs a hundred, with figures): no
        /// registration the backend gave a token to is missing from the database.
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
            }
            let used = Self.lines(simState, "SELECT DISTINCT client_id FROM access_token")
            let kept = Self.lines(database, "SELECT client_id FROM client_credentials")
            #expect(used.subtracting(kept).isEmpty, "the backend gave tokens to \(used.subtracting(kept).count) unstored registrations")
            sim.process.signal(SIGTERM)
            _ = await sim.process.waitForExit()
        }
    }
}
