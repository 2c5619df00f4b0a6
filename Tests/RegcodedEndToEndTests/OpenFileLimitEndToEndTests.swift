import Foundation
import RegcodeTestSupport
import Testing

/// A `per-device` fleet larger than the open-file limit allows, with the real `regcoded` and its embedded simulator:
/// the devices past the connection budget back off on transport errors and the daemon runs on. (Out of descriptors,
/// libdispatch's worker monitor aborts the process with SIGILL.)
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct OpenFileLimitEndToEndTests {
        @Test func aPerDeviceFleetPastTheLimitRunsOnAndStopsCleanly() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("db.sqlite")
            let config = directory.path("regcoded.yaml")
            // 400 descriptors: a budget of (400 − 100) / 2 = 150 connections, for 300 devices whose every connection
            // is two of the daemon's descriptors (its end and the embedded simulator's).
            try """
            simulator:
              listen: 127.0.0.1:0
            print_codes: false
            fleets:
              - name: box
                count: 300
                connections: per-device
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "/bin/sh",
                [
                    "-c", #"ulimit -n 400 && exec "$0" "$@""#, BuiltProducts.url("regcoded").path,
                    "--config", config, "--database", database, "--socket", directory.path("s.sock"),
                ],
                absolute: true
            )
            #expect(await daemon.waitForOutput("connections.budget=150 connections.needed=300"), "\(daemon.text)")

            func count(_ sql: String) -> Int { (try? SQLiteShell.run(database, sql)).flatMap { Int($0) } ?? 0 }
            let refused = "SELECT count(DISTINCT device) FROM request_attempts WHERE outcome = 'transport-error'"
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, count("SELECT count(*) FROM codes") < 150 || count(refused) < 150 {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(count("SELECT count(*) FROM codes") >= 150)
            #expect(count(refused) >= 150, "devices past the budget record the refused connect")

            // Still alive well past the monitor's one-second tick, and a clean stop.
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0, "\(daemon.text)")
            #expect(try SQLiteShell.run(database, "PRAGMA integrity_check") == "ok")
        }
    }
}
