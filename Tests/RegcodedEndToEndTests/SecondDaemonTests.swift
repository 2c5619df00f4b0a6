import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One daemon per database, and edge inputs refused with exit 2 before any file is created or
/// modified, with the real `regcoded`.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct SecondDaemonTests {
        /// `regcoded` with the embedded simulator on a free port.
        static func daemonArguments(database: String, socket: String, devices: Int = 2) -> [String] {
            [
                "--database", database, "--socket", socket, "--simulator-listen", "127.0.0.1:0",
                "--devices", "\(devices)", "--no-print-codes", "--log-level", "info",
            ]
        }

        static func devices(at socket: String) async -> Int? {
            let status = try? await ControlClient.withConnection(to: socket) { try await $0.call(method: "daemon.status") }
            return status?["devices"]?.intValue.map(Int.init)
        }

        @Test func secondDaemonOnTheSameDatabaseRefusesAndLeavesTheFirstAlone() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("regcoded.sqlite")
            let socket = directory.path("first.sock")
            let first = try ChildProcess("regcoded", Self.daemonArguments(database: database, socket: socket))
            let deadline = ContinuousClock.now + .seconds(30)
            while await Self.devices(at: socket) != 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(await Self.devices(at: socket) == 2, "first regcoded did not start: \(first.text)")
            let rowsBefore = try SQLiteShell.run(database, "SELECT group_concat(name) FROM (SELECT name FROM devices ORDER BY name)")
            #expect(rowsBefore == "stb-1,stb-2")

            let secondSocket = directory.path("second.sock")
            let second = try ChildProcess("regcoded", Self.daemonArguments(database: database, socket: secondSocket, devices: 1))
            let status = await second.waitForExit()
            #expect(status == 2, "\(second.text)")
            #expect(second.text.contains("\(database) is in use by regcoded (pid \(first.pid))"), "\(second.text)")
            #expect(!FileManager.default.fileExists(atPath: secondSocket))

            // The first daemon's devices are untouched, and it still answers.
            #expect(try SQLiteShell.run(database, "SELECT group_concat(name) FROM (SELECT name FROM devices ORDER BY name)") == rowsBefore)
            #expect(await Self.devices(at: socket) == 2)
            #expect(first.process.isRunning)
            // Readers are not locked out.
            let report = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--database", database, "--format", "json"])
            #expect(report.status == 0, "\(report.stderr)")

            first.signal(SIGTERM)
            #expect(await first.waitForExit() == 0)
        }

        /// Runs `regcoded` expecting a configuration error; returns its standard error.
        static func refused(_ arguments: [String]) throws -> String {
            let result = try Command.run(BuiltProducts.url("regcoded"), arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("configuration error"), "\(arguments): \(result.stderr)")
            return result.stderr
        }

        @Test func edgeInputsExitWithTwoAndCreateNothing() throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("state.sqlite")
            let socket = directory.path("regcoded.sock")
            let base = Self.daemonArguments(database: database, socket: socket)
            #expect(try Self.refused(base + ["--poll-interval", "1e16"]).contains("--poll-interval"))
            #expect(try Self.refused(base + ["--poll-interval", "1e15"]).contains("maximum"))
            #expect(try Self.refused(base + ["--simulator-auto-approve-after", "1e16"]).contains("--simulator-auto-approve-after"))
            #expect(try Self.refused(base + ["--config", "/dev/null"]).contains("not a regular file"))
            #expect(try Self.refused(base + ["--config", directory.path("missing.yaml")]).contains("no such file"))
            let statement = directory.path("missing.jwt")
            #expect(try Self.refused(base + ["--software-statement", statement]).contains(statement))
            let badSocket = directory.path("missing/regcoded.sock")
            #expect(try Self.refused(Self.daemonArguments(database: database, socket: badSocket)).contains("does not exist"))
            let config = directory.path("overflow.yaml")
            try "defaults:\n  poll:\n    stage_backoff_cap: 1e16\n".write(toFile: config, atomically: false, encoding: .utf8)
            #expect(try Self.refused(base + ["--config", config]).contains("stage_backoff_cap"))
            #expect(!FileManager.default.fileExists(atPath: database))
            #expect(!FileManager.default.fileExists(atPath: socket))
        }

        @Test func foreignDatabaseIsRefusedUnchanged() throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("other.sqlite")
            try SQLiteShell.run(database, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep');")
            let before = try Data(contentsOf: URL(fileURLWithPath: database))
            let stderr = try Self.refused(Self.daemonArguments(database: database, socket: directory.path("regcoded.sock")))
            #expect(stderr.contains("is not a regcoded state database"), "\(stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
            #expect(try SQLiteShell.run(database, "PRAGMA journal_mode") == "delete")
        }
    }
}
