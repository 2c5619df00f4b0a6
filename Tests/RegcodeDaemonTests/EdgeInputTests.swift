import Foundation
import Logging
import RegcodeStore
import RegcodeSupport
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Every edge input is a configuration error, reported before anything is created or modified.
@Suite struct EdgeInputTests {
    /// A directory removed at the end of the test; short, because socket paths are limited.
    final class Scratch {
        let path: String
        init() throws {
            path = "/tmp/rce-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        func file(_ name: String) -> String { "\(path)/\(name)" }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let quiet: Logger = {
        var logger = Logger(label: "edge-input-test")
        logger.logLevel = .critical
        return logger
    }()

    static func sqlite(_ database: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database, sql]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// Bytes and modification time, to prove a refused file was not touched.
    static func fingerprint(_ path: String) throws -> (Data, Date?) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        return (data, modified)
    }

    // MARK: Durations

    @Test(arguments: ["1e16", "1e15", "366d", "53w", "1e400", "inf", "nan"])
    func tooLongOrNonFiniteDurationsAreRefusedWithAReason(text: String) {
        let error = #expect(throws: DurationParser.Problem.self) { try DurationParser.read(text) }
        #expect(error == .tooLong(text) || error == .notFinite(text))
        #expect(error?.description.contains(text) == true)
    }

    @Test func negativeDurationsAreRefusedAsNegative() {
        #expect(throws: DurationParser.Problem.negative("-1")) { try DurationParser.read("-1") }
        #expect(throws: DurationParser.Problem.negative("-inf")) { try DurationParser.read("-inf") }
        #expect(DurationParser.parse("365d") == DurationParser.maximum)
    }

    @Test(
        arguments: [
            "defaults:\n  poll:\n    interval: VALUE",
            "defaults:\n  poll:\n    stage_backoff_cap: VALUE",
            "defaults:\n  poll:\n    backoff_cap: VALUE",
            "defaults:\n  poll:\n    first_poll_delay: VALUE",
            "defaults:\n  ramp: VALUE",
            "defaults:\n  cycle:\n    hold: VALUE",
            "retention:\n  events: VALUE",
            "retention:\n  poll_attempts: VALUE",
            "simulator:\n  auto_approve_after: VALUE",
        ]
    )
    func everyDurationKeyRefusesAnOverflowingValue(template: String) {
        for value in ["1e16", "1e15", "-1"] {
            let yaml = template.replacingOccurrences(of: "VALUE", with: value)
            let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.parse(yaml, file: "c.yaml") }
            #expect(error?.file == "c.yaml")
            #expect(error?.reason.contains(value) == true, "\(yaml): \(String(describing: error))")
        }
    }

    // MARK: Configuration and secret files

    @Test func configurationThatIsNotARegularFileSaysSo() throws {
        let scratch = try Scratch()
        for path in ["/dev/null", scratch.path] {
            let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.load(path: path) }
            #expect(error?.file == path)
            #expect(error?.reason.contains("not a regular file") == true, "\(String(describing: error))")
        }
    }

    @Test func missingConfigurationSaysNoSuchFile() throws {
        let scratch = try Scratch()
        let path = scratch.file("missing.yaml")
        let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.load(path: path) }
        #expect(error?.reason == "no such file")
    }

    @Test(.enabled(if: geteuid() != 0, "root is never refused by file permissions"))
    func unreadableConfigurationSaysPermissionDenied() throws {
        let scratch = try Scratch()
        let path = scratch.file("private.yaml")
        try "log_level: info\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0)
        let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.load(path: path) }
        #expect(error?.reason == "permission denied")
    }

    @Test func missingSoftwareStatementNamesTheFile() throws {
        let scratch = try Scratch()
        let statement = scratch.file("statement.jwt")
        var configuration = DaemonConfiguration()
        configuration.fleets[0].softwareStatementFile = statement
        let error = #expect(throws: ConfigurationError.self) { try DeviceCatalog.load(configuration: configuration, environment: [:]) }
        #expect(error?.key == "fleets[0].software_statement_file")
        #expect(error?.reason == "\(statement): no such file")

        configuration.fleets[0].softwareStatementFile = scratch.path
        let directory = #expect(throws: ConfigurationError.self) { try DeviceCatalog.load(configuration: configuration, environment: [:]) }
        #expect(directory?.reason.contains("\(scratch.path): is a directory, not a regular file") == true)
    }

    // MARK: Socket path

    @Test func socketPathProblemsAreFoundBeforeBinding() throws {
        let scratch = try Scratch()
        #expect(DaemonConfiguration.socketPathProblem(scratch.file("regcoded.sock")) == nil)
        #expect(DaemonConfiguration.socketPathProblem(scratch.file("missing/regcoded.sock"))?.contains("does not exist") == true)
        let long = scratch.file(String(repeating: "s", count: 120))
        #expect(DaemonConfiguration.socketPathProblem(long)?.contains("bytes long") == true)
        let regular = scratch.file("plain")
        _ = FileManager.default.createFile(atPath: regular, contents: Data("x".utf8))
        #expect(DaemonConfiguration.socketPathProblem(regular) == "\(regular) exists and is not a socket")
        #expect(DaemonConfiguration.socketPathProblem(scratch.file("plain/regcoded.sock"))?.contains("not a directory") == true)
    }

    @Test func badSocketPathCreatesNoDatabase() throws {
        let scratch = try Scratch()
        var configuration = DaemonConfiguration()
        configuration.database = scratch.file("state.sqlite")
        configuration.socket = scratch.file("missing/regcoded.sock")
        let error = #expect(throws: ConfigurationError.self) {
            _ = try Daemon.asRegcoded(configuration: configuration, logger: Self.quiet)
        }
        #expect(error?.key == "socket")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    // MARK: Database

    @Test func foreignAndNewerDatabasesAreRefusedUnchanged() throws {
        let scratch = try Scratch()
        let notSQLite = scratch.file("notes.txt")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: notSQLite))
        let foreign = scratch.file("foreign.sqlite")
        try Self.sqlite(foreign, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep');")
        let newer = scratch.file("newer.sqlite")
        _ = try RegcodeStore(path: newer, logger: Self.quiet)
        // Back to a rollback journal, so the header is the whole truth and any WAL switch shows.
        try Self.sqlite(newer, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99;")

        for database in [notSQLite, foreign, newer] {
            let before = try Self.fingerprint(database)
            var configuration = DaemonConfiguration()
            configuration.database = database
            configuration.socket = scratch.file("regcoded.sock")
            let error = #expect(throws: ConfigurationError.self) {
                _ = try Daemon.asRegcoded(configuration: configuration, logger: Self.quiet)
            }
            #expect(error?.key == "database")
            #expect(error?.reason.contains(database) == true)
            let after = try Self.fingerprint(database)
            #expect(after.0 == before.0, "\(database) changed")
            #expect(after.1 == before.1, "\(database) modified")
            #expect(!FileManager.default.fileExists(atPath: database + "-wal"))
        }
    }

    /// A second process holding the lock (here `flock(1)` on the database file) is named with its PID and command.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func lockHeldElsewhereNamesTheHolder() async throws {
        let scratch = try Scratch()
        let database = scratch.file("state.sqlite")
        #expect(FileManager.default.createFile(atPath: database, contents: nil))
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [database, "sh", "-c", "echo locked; exec sleep 2"]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer {
            holder.terminate()
            holder.waitUntilExit()
        }
        _ = output.fileHandleForReading.availableData  // "locked": flock(1) holds the lock now.

        let error = #expect(throws: ConfigurationError.self) { try DatabaseLock.acquire(database: database) }
        #expect(error?.key == "database")
        #expect(error?.reason == "\(database) is in use by flock (pid \(holder.processIdentifier))")
        // Nothing written: the file is still the empty one, alone in its directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["state.sqlite"])
        #expect((try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) == 0)
    }

    @Test func lockRecordsThisProcessAndIsReentrantWithinIt() throws {
        let scratch = try Scratch()
        let database = scratch.file("state.sqlite")
        try DatabaseLock.acquire(database: database)
        try DatabaseLock.acquire(database: database)
        // The same file by another name is the same lock, already held here.
        let link = scratch.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: database)
        #expect(try DatabaseLock.acquire(database: link))
        var info = stat()
        #expect(stat(database, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let holder = DatabaseLock.holder(of: DatabaseLock.FileIdentity(info))
        #expect(holder?.pid == getpid())
    }

    /// Before the listeners are checked, only an existing database is locked: a missing one is not created.
    @Test func lockOfAMissingDatabaseCreatesNothingUntilAsked() throws {
        let scratch = try Scratch()
        let database = scratch.file("state.sqlite")
        #expect(try DatabaseLock.acquire(database: database, createIfMissing: false) == false)
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    /// `/proc/locks` lines: a flock on the device and inode asked about names its PID; others do not.
    @Test func procLocksLinesAreMatchedByDeviceAndInode() {
        var info = stat()
        info.st_dev = (0xfe << 8) | 0x01
        info.st_ino = 16_238_349
        let identity = DatabaseLock.FileIdentity(info)
        #expect(DatabaseLock.lockHolder(line: "1: FLOCK  ADVISORY  WRITE 19272 fe:01:16238349 0 EOF", identity: identity) == 19272)
        #expect(DatabaseLock.lockHolder(line: "2: FLOCK  ADVISORY  WRITE 19273 fe:00:16238349 0 EOF", identity: identity) == nil)
        #expect(DatabaseLock.lockHolder(line: "3: POSIX  ADVISORY  WRITE 17422 fe:01:16238349 0 EOF", identity: identity) == nil)
        #expect(DatabaseLock.lockHolder(line: "4: FLOCK  ADVISORY  WRITE 17423 fe:01:5581026 0 EOF", identity: identity) == nil)
    }
}
