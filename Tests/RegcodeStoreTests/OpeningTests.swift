import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@Suite struct OpeningTests {
    @Test func createdSchemaEqualsSchemaFile() async throws {
        let dir = try TempDirectory()
        let daemonDB = dir.path("daemon.db")
        let shellDB = dir.path("shell.db")
        let store = try openStore(daemonDB)
        try SQLiteShell.run(shellDB, input: schemaFileURL)

        let master = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        let daemonSchema = try SQLiteShell.run(daemonDB, master)
        let shellSchema = try SQLiteShell.run(shellDB, master)
        #expect(daemonSchema.contains("CREATE TABLE devices"))
        #expect(daemonSchema == shellSchema)

        for pragma in ["PRAGMA user_version", "PRAGMA application_id"] {
            #expect(try SQLiteShell.run(daemonDB, pragma) == SQLiteShell.run(shellDB, pragma), "\(pragma)")
        }
        #expect(try SQLiteShell.run(daemonDB, "PRAGMA user_version") == "\(RegcodeStore.schemaVersion)")
        #expect(try SQLiteShell.run(daemonDB, "PRAGMA application_id") == "\(RegcodeStore.applicationID)")

        // The shell-made database is accepted as an existing one.
        _ = try openStore(shellDB)
        _ = store
    }

    @Test func filesArePrivateAndWALIsOn() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))

        for file in [path, path + "-wal", path + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            #expect(try permissions(file) == 0o600, "\(file)")
        }
        #expect(try SQLiteShell.run(path, "PRAGMA journal_mode") == "wal")
        #expect(store.path == path)
    }

    @Test func reopensExistingDatabase() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        do {
            let store = try openStore(path)
            try await store.saveDevice(makeDevice("stb-1"))
        }
        let reopened = try openStore(path)
        #expect(try await reopened.loadDevices().map(\.name) == ["stb-1"])
    }

    @Test func refusesNewerSchemaVersion() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        do { _ = try openStore(path) }
        try SQLiteShell.run(path, "PRAGMA user_version = 99")

        let error = #expect(throws: RegcodeStoreError.self) { try openStore(path) }
        #expect(error == .unsupportedSchemaVersion(path: path, found: 99, supported: RegcodeStore.schemaVersion))
        #expect(error?.description.contains("newer") == true)
        #expect(error?.description.contains(path) == true)
    }

    @Test func refusesForeignDatabase() async throws {
        let dir = try TempDirectory()
        let path = dir.path("other.db")
        try SQLiteShell.run(path, "CREATE TABLE notes (text TEXT)")

        let error = #expect(throws: RegcodeStoreError.self) { try openStore(path) }
        guard case .notARegcodeDatabase(let reportedPath, _) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
    }

    @Test func unopenableFileNamesPathAndReason() async throws {
        let dir = try TempDirectory()
        let missingDirectory = dir.path("missing/state.db")
        let error = #expect(throws: RegcodeStoreError.self) { try openStore(missingDirectory) }
        #expect(error?.description.contains(missingDirectory) == true)
        #expect(error?.description.contains("No such file or directory") == true)

        let garbage = dir.path("garbage.db")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        let notSQLite = #expect(throws: RegcodeStoreError.self) { try openStore(garbage) }
        guard case .cannotOpen(let reportedPath, let reason) = notSQLite else {
            Issue.record("unexpected error \(String(describing: notSQLite))")
            return
        }
        #expect(reportedPath == garbage)
        #expect(!reason.isEmpty)
    }

    /// A refused file is refused before it is opened for writing: its bytes, its journal mode
    /// and its modification time stay as they were.
    @Test func refusedFilesAreLeftByteForByteUnchanged() async throws {
        let dir = try TempDirectory()
        let foreign = dir.path("foreign.db")
        try SQLiteShell.run(foreign, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep');")
        let newer = dir.path("newer.db")
        do { _ = try openStore(newer) }
        try SQLiteShell.run(newer, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99;")
        let short = dir.path("short.db")
        try Data("SQLite format 3\0".utf8).write(to: URL(fileURLWithPath: short))

        for path in [foreign, newer, short] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            #expect(throws: RegcodeStoreError.self) { try openStore(path) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(path)")
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified, "\(path)")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "\(path)")
        }
        #expect(try SQLiteShell.run(foreign, "PRAGMA journal_mode") == "delete")
        #expect(try SQLiteShell.run(newer, "PRAGMA journal_mode") == "delete")
    }

    /// An existing empty file (a crash between creating and initialising it) is a new database.
    @Test func emptyExistingFileIsCreatedAsNew() async throws {
        let dir = try TempDirectory()
        let path = dir.path("empty.db")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        _ = try openStore(path)
        #expect(try SQLiteShell.run(path, "PRAGMA application_id") == "\(RegcodeStore.applicationID)")
    }
}
