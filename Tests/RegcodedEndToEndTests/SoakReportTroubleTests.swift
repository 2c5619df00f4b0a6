import Foundation
import RegcodeTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A run where most devices never get a code: real regcoded against a real pass-sim whose DCR
/// endpoints answer every request with 429; then the faults are lifted and two more devices log in.
/// The report's first lines must say so and name the dead devices.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct SoakReportTroubleTests {
        @Test func theReportLeadsWithTheDevicesThatNeverGotACode() async throws {
            let directory = try TemporaryDirectory()
            let faults = directory.path("faults.json")
            try #"{"dcr":{"throttle429":1}}"#.write(toFile: faults, atomically: true, encoding: .utf8)
            let started = try await PassSimProcess.start(["--faults", faults, "--seed", "3", "--auto-approve-after", "1s"])
            let config = directory.path("regcoded.yaml")
            try """
            backend: \(started.url)
            fleets:
              - name: doomed
                count: 18
                poll: {stage_retries: 1, stage_backoff_base: 100ms, stage_backoff_cap: 200ms}
              - name: steady
                count: 0

            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let socket = directory.path("s.sock")
            let daemon = try ChildProcess(
                "regcoded",
                ["--config", config, "--database", database, "--socket", socket, "--software-statement", started.statementFile]
            )

            // Each doomed device gives up on its second 429 (stage_retries: 1).
            let gaveUp = """
                SELECT count(DISTINCT device) FROM request_attempts
                WHERE stage = 'registration' AND outcome = 'throttled' AND retry_delay_ms IS NULL
                """
            #expect(await Self.waitFor(database, gaveUp, equals: 18, while: daemon), "\(daemon.text.suffix(2000))")

            // Lift the faults; two devices of the second fleet then register, get codes and are approved.
            var lift = URLRequest(url: URL(string: "\(started.url)/_sim/faults")!)
            lift.httpMethod = "PUT"
            lift.setValue("application/json", forHTTPHeaderField: "Content-Type")
            lift.httpBody = Data("{}".utf8)
            let (_, response) = try await URLSession.shared.data(for: lift)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let control = try RawSocket(path: socket)
            for (id, name) in [(1, "steady-1"), (2, "steady-2")] {
                control.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"devices.add","params":{"device":"\#(name)","fleet":"steady"}}"# + "\n")
                let reply = control.reply(id: id)
                #expect(reply?["error"] == nil, "\(String(describing: reply))")
            }
            let authenticated = "SELECT count(*) FROM events WHERE name = 'setAuthenticationStatus' AND json_extract(args, '$.status') = 1"
            #expect(await Self.waitFor(database, authenticated, equals: 2, while: daemon), "\(daemon.text.suffix(2000))")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)

            let dead = try SQLiteShell.run(database, "SELECT name FROM devices WHERE fleet = 'doomed'").split(separator: "\n").map(String.init)
            #expect(dead.count == 18)
            let run = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--database", database, "--html", directory.path("r.html")])
            #expect(run.status == 0, "\(run.stderr)")
            let lines = run.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count > 4)
            #expect(lines[2] == "trouble: 18 of 20 devices never got a code: 18 stopped at registration (429).", "\(lines.prefix(8))")
            let top = lines.prefix(12).joined(separator: "\n")
            let named = top.components(separatedBy: "never got a code: ").last ?? ""
            for device in dead {
                #expect(named.range(of: "\\b\(device)\\b", options: .regularExpression) != nil, "\(device) is not named: \(top)")
            }
            // The two devices that logged in are not among them.
            for device in try SQLiteShell.run(database, "SELECT name FROM devices WHERE fleet = 'steady'").split(separator: "\n") {
                #expect(named.range(of: "\\b\(device)\\b", options: .regularExpression) == nil)
            }
            let html = try String(contentsOf: URL(fileURLWithPath: directory.path("r.html")), encoding: .utf8)
            #expect(html.contains("<p class=\"lead\">18 of 20 devices never got a code: 18 stopped at registration (429).</p>"))
        }

        /// Polls `sql` until it answers `expected` (at most 40 s) or the daemon exits.
        static func waitFor(_ database: String, _ sql: String, equals expected: Int, while daemon: ChildProcess) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(40)
            while ContinuousClock.now < deadline, daemon.process.isRunning {
                if Int((try? SQLiteShell.run(database, sql)) ?? "") == expected { return true }
                try? await Task.sleep(for: .milliseconds(200))
            }
            return false
        }
    }
}
