import ControlSocket
import Foundation
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension EndToEnd {
    /// One daemon per database file, whatever path names it: a second `regcoded` on a symlink, a hard link, a bind
    /// mount or a relative path to the first one's database is refused (exit 2, naming the holder) and the first
    /// daemon's devices stay.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct DatabaseIdentityLockTests {
        /// Whether an unprivileged bind mount works here (a user and mount namespace through `unshare -rm`).
        static let canBindMount: Bool = {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
            guard let directory = try? TemporaryDirectory() else { return false }
            let (source, target) = (directory.path("a"), directory.path("b"))
            guard FileManager.default.createFile(atPath: source, contents: Data("a".utf8)),
                FileManager.default.createFile(atPath: target, contents: Data())
            else { return false }
            let probe = try? Command.run(URL(fileURLWithPath: "/usr/bin/unshare"), ["-rm", "mount", "--bind", source, target])
            return probe?.status == 0
        }()

        /// A first daemon with two devices on `directory/regcoded.sqlite`, answering on `first.sock`.
        static func startFirst(in directory: TemporaryDirectory) async throws -> ChildProcess {
            let socket = directory.path("first.sock")
            let first = try ChildProcess(
                "regcoded",
                SecondDaemonTests.daemonArguments(database: directory.path("regcoded.sqlite"), socket: socket)
            )
            let deadline = ContinuousClock.now + .seconds(30)
            while await SecondDaemonTests.devices(at: socket) != 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(await SecondDaemonTests.devices(at: socket) == 2, "first regcoded did not start: \(first.text)")
            return first
        }

        /// Starts the second daemon (one device) with `database` as its path, and checks it is refused and the first
        /// one keeps its devices.
        static func expectRefused(
            first: ChildProcess,
            in directory: TemporaryDirectory,
            database: String,
            launch: (_ arguments: [String]) throws -> ChildProcess = { try ChildProcess("regcoded", $0) }
        ) async throws {
            let path = directory.path("regcoded.sqlite")
            let rowsBefore = try SQLiteShell.run(path, "SELECT group_concat(name) FROM (SELECT name FROM devices ORDER BY name)")
            #expect(rowsBefore == "stb-1,stb-2")
            let secondSocket = directory.path("second.sock")
            let second = try launch(SecondDaemonTests.daemonArguments(database: database, socket: secondSocket, devices: 1))
            let status = await second.waitForExit()
            #expect(status == 2, "\(second.text)")
            #expect(second.text.contains("is in use by regcoded (pid \(first.pid))"), "\(second.text)")
            #expect(!FileManager.default.fileExists(atPath: secondSocket))
            #expect(try SQLiteShell.run(path, "SELECT group_concat(name) FROM (SELECT name FROM devices ORDER BY name)") == rowsBefore)
            #expect(await SecondDaemonTests.devices(at: directory.path("first.sock")) == 2)
            #expect(first.process.isRunning)
        }

        static func stop(_ first: ChildProcess) async {
            first.signal(SIGTERM)
            #expect(await first.waitForExit() == 0)
        }

        @Test func aSymlinkToTheDatabaseIsRefused() async throws {
            let directory = try TemporaryDirectory()
            let first = try await Self.startFirst(in: directory)
            let link = directory.path("link.sqlite")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path("regcoded.sqlite"))
            try await Self.expectRefused(first: first, in: directory, database: link)
            await Self.stop(first)
        }

        @Test func aHardLinkToTheDatabaseIsRefused() async throws {
            let directory = try TemporaryDirectory()
            let first = try await Self.startFirst(in: directory)
            let link = directory.path("hard.sqlite")
            try FileManager.default.linkItem(atPath: directory.path("regcoded.sqlite"), toPath: link)
            try await Self.expectRefused(first: first, in: directory, database: link)
            await Self.stop(first)
        }

        @Test func aRelativePathToTheDatabaseIsRefused() async throws {
            let directory = try TemporaryDirectory()
            let first = try await Self.startFirst(in: directory)
            let sub = directory.path("sub")
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
            try await Self.expectRefused(first: first, in: directory, database: "../regcoded.sqlite") { arguments in
                try ChildProcess("regcoded", arguments, directory: URL(fileURLWithPath: sub))
            }
            await Self.stop(first)
        }

        @Test(.enabled(if: canBindMount, "no unprivileged bind mount here (unshare -rm mount --bind failed)"))
        func aBindMountOfTheDatabaseIsRefused() async throws {
            let directory = try TemporaryDirectory()
            let first = try await Self.startFirst(in: directory)
            let mounted = directory.path("mounted.sqlite")
            #expect(FileManager.default.createFile(atPath: mounted, contents: Data()))
            let database = directory.path("regcoded.sqlite")
            try await Self.expectRefused(first: first, in: directory, database: mounted) { arguments in
                // The second daemon runs in a mount namespace of its own where `mounted.sqlite` is the database.
                let script = "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\""
                return try ChildProcess(
                    "/usr/bin/unshare",
                    ["-rm", "sh", "-c", script, "sh", database, mounted, BuiltProducts.url("regcoded").path] + arguments,
                    absolute: true
                )
            }
            await Self.stop(first)
        }

        /// An older version's daemon holds `<database>.lock` (an exclusive `flock` with its PID inside) and knows no
        /// other lock: a new daemon is refused beside it, and while a new daemon runs, the older version's lock is
        /// taken, so an older daemon cannot start beside it either. A database no older version used gets no such file.
        @Test func theLockFileOfOlderVersionsIsHonouredBothWays() async throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("regcoded.sqlite")
            let lockFile = database + ".lock"
            // The older daemon, as far as locking goes: `flock` holds the file while its shell (the same process, with
            // `--no-fork`, so killing it drops the lock) writes its PID and waits.
            let older = try ChildProcess(
                "/usr/bin/flock",
                ["--no-fork", "-x", lockFile, "sh", "-c", "echo $$ > \"$0\"; exec sleep 60", lockFile],
                absolute: true
            )
            defer { older.signal(SIGKILL) }
            var holder: String?
            for _ in 0..<200 where holder == nil {
                holder = (try? String(contentsOfFile: lockFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if holder?.isEmpty == true { holder = nil }
                if holder == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            let pid = try #require(holder)
            #expect(pid == "\(older.pid)")
            let refused = try ChildProcess("regcoded", SecondDaemonTests.daemonArguments(database: database, socket: directory.path("new.sock")))
            #expect(await refused.waitForExit() == 2, "\(refused.text)")
            #expect(refused.text.contains("is in use by regcoded (pid \(pid)), an older version holding \(lockFile)"), "\(refused.text)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("new.sock")))
            older.signal(SIGKILL)
            _ = await older.waitForExit()

            // The older daemon gone, the new one starts and holds the file's lock: an older one would now be refused.
            let first = try await Self.startFirst(in: directory)
            let olderAgain = try Command.run("/usr/bin/flock", ["-n", "-x", lockFile, "true"])
            #expect(olderAgain.status != 0, "an older version could lock \(lockFile) beside a running daemon")
            await Self.stop(first)
            #expect(try Command.run("/usr/bin/flock", ["-n", "-x", lockFile, "true"]).status == 0)

            // A fresh database: no lock file of older versions is created.
            let fresh = try TemporaryDirectory()
            let second = try await Self.startFirst(in: fresh)
            #expect(!FileManager.default.fileExists(atPath: fresh.path("regcoded.sqlite.lock")))
            await Self.stop(second)
        }
    }
}
