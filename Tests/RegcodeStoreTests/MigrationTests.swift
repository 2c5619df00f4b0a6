import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@Suite struct MigrationTests {
    /// A version-1 database made by the `sqlite3` shell, with rows in every table.
    static func makeVersion1(_ dir: TempDirectory, name: String = "v1.db") throws -> String {
        let path = dir.path(name)
        let settings = #"{"name":"stb-1","requestor":"REF30"}"#
        let rows = """
            INSERT INTO devices (name, device_id, device_info, profile, requestor, scenario, settings, seed, fleet,
                                 added_at_runtime, selected_mvpd, state, mvpds, options, renewals, created_at, updated_at)
            VALUES ('stb-1', 'id-stb-1', '{"model":"AppleTV"}', 'v2', 'REF30', 'login', '\(settings)', -7, 'lab', 0,
                    'Cablevision', 'polling', '[{"displayName":"Optimum","id":"Cablevision"}]', '{}', 1, \(t0), \(t0 + 5)),
                   ('stb-2', 'id-stb-2', '{}', 'v1', 'REF30', 'login', '\(settings)', 3, NULL, 1,
                    NULL, 'failed', NULL, '{"a":"b"}', 0, \(t0 + 1), \(t0 + 1));
            INSERT INTO client_credentials VALUES ('stb-1', 'client-1', 'secret-1', \(t0));
            INSERT INTO access_tokens VALUES ('stb-1', 'token-1', \(t0 + 86_400_000), \(t0));
            INSERT INTO codes (device, code, mvpd, issued_at, expires_at, status, ended_at)
            VALUES ('stb-1', 'OLD0001', 'Cablevision', \(t0), \(t0 + 60_000), 'expired', \(t0 + 60_000)),
                   ('stb-1', 'NEW0002', 'Cablevision', \(t0 + 60_000), \(t0 + 120_000), 'pending', NULL);
            INSERT INTO auth_profiles VALUES ('stb-1', 'Cablevision', 'user-1', \(t0 + 7_200_000), \(t0));
            INSERT INTO poll_attempts (device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms)
            VALUES ('stb-1', 'OLD0001', \(t0), \(t0 + 2), 404, 12.5, 'pending', 5000),
                   ('removed', 'X', \(t0), \(t0 + 3), NULL, 1.0, 'transport-error', NULL);
            INSERT INTO events (device, time, name, args)
            VALUES ('stb-1', \(t0), 'setRequestorComplete', '{"status":1}'),
                   ('removed', \(t0 + 1), 'status', '{"statusDictionary":{"errorId":"R400","level":"error"}}');
            DELETE FROM events WHERE seq = 1;
            """
        let script = dir.path("\(name).sql")
        try Data((schemaVersion1SQL + "\n" + rows).utf8).write(to: URL(fileURLWithPath: script))
        try SQLiteShell.run(path, input: URL(fileURLWithPath: script))
        return path
    }

    static let tables = ["devices", "client_credentials", "access_tokens", "codes", "auth_profiles", "poll_attempts", "events", "sqlite_sequence"]

    /// Every row of `table` as the shell prints it, in rowid order; `auth_profiles` without the `type` column
    /// migration 5 added (its rows read `regular` after it).
    static func rows(_ path: String, _ table: String, columns: String = "*") throws -> String {
        let columns = table == "auth_profiles" && columns == "*" ? "device, mvpd, user_id, expires_at, authenticated_at" : columns
        return try SQLiteShell.run(path, "SELECT \(columns) FROM \(table) ORDER BY rowid")
    }

    @Test func aVersion1DatabaseIsMigratedInPlaceKeepingEveryRow() async throws {
        let dir = try TempDirectory()
        let path = try Self.makeVersion1(dir)
        var before: [String: String] = [:]
        for table in Self.tables { before[table] = try Self.rows(path, table) }
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "1")

        let store = try openStore(path)
        #expect(store.fileSchemaVersion == RegcodeStore.schemaVersion)
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "\(RegcodeStore.schemaVersion)")
        #expect(try SQLiteShell.run(path, "PRAGMA application_id") == "\(RegcodeStore.applicationID)")

        let v1DeviceColumns =
            "name, device_id, device_info, profile, requestor, scenario, settings, seed, fleet, added_at_runtime, selected_mvpd, state, mvpds, options, renewals, created_at, updated_at"
        for table in Self.tables where table != "devices" && table != "events" {
            #expect(try Self.rows(path, table) == before[table], "\(table)")
        }
        #expect(try Self.rows(path, "events", columns: "seq, device, time, name, args") == before["events"])
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM events WHERE app IS NOT NULL") == "0")
        #expect(try Self.rows(path, "devices", columns: v1DeviceColumns) == before["devices"])
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM devices WHERE client_address IS NULL") == "2")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM request_attempts") == "0")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM auth_profiles WHERE type IS NOT 'regular'") == "0")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM logins") == "0")

        // The store reads the migrated rows, and the logs carry on where they were.
        let devices = try await store.loadDevices()
        #expect(devices.map(\.name) == ["stb-1", "stb-2"])
        #expect(devices.map(\.clientAddress) == [nil, nil])
        #expect(devices.first?.snapshot.code?.code == "NEW0002")
        #expect(devices.first?.snapshot.credentials == ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))
        #expect(try await store.lastEventSequence() == 2)
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: nil).count == 2)
        let stored = try await store.apply([
            DeviceStep(device: "stb-1", requests: [request(.session, at: t0 + 10)], events: [.setRequestorComplete(1)], epochMs: t0 + 10)
        ])
        #expect(stored.map(\.seq) == [3])
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).count == 1)
        #expect(try await store.assignClientAddresses(["stb-1": "10.0.0.1", "stb-2": "10.0.0.2"]) == ["stb-1", "stb-2"])

        // Opening again finds the current version and changes nothing.
        _ = try openStore(path)
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "\(RegcodeStore.schemaVersion)")
    }

    @Test func aMigratedDatabaseHasTheSchemaOfANewOne() async throws {
        let dir = try TempDirectory()
        let migrated = try Self.makeVersion1(dir)
        _ = try openStore(migrated)
        let fresh = dir.path("fresh.db")
        try SQLiteShell.run(fresh, input: schemaFileURL)

        // Every object but `devices`, `events` and `auth_profiles` has the same SQL text; those got a column by
        // ALTER TABLE, so they are compared column by column (name, type, nullability, default, key, order).
        let objects =
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT IN ('devices', 'events', 'auth_profiles') ORDER BY name"
        #expect(try SQLiteShell.run(migrated, objects) == SQLiteShell.run(fresh, objects))
        for table in ["devices", "events", "auth_profiles"] {
            #expect(
                try SQLiteShell.run(migrated, "SELECT * FROM pragma_table_xinfo('\(table)')")
                    == SQLiteShell.run(fresh, "SELECT * FROM pragma_table_xinfo('\(table)')"),
                "\(table)"
            )
        }
        for table in ["devices", "request_attempts", "events", "apps", "ae_tokens", "logins"] {
            let indexes = "SELECT name, \"unique\", partial FROM pragma_index_list('\(table)') ORDER BY name"
            #expect(try SQLiteShell.run(migrated, indexes) == SQLiteShell.run(fresh, indexes), "\(table)")
        }
        #expect(try SQLiteShell.run(migrated, "PRAGMA user_version") == SQLiteShell.run(fresh, "PRAGMA user_version"))
        #expect(try SQLiteShell.run(migrated, "PRAGMA integrity_check") == "ok")
        #expect(try SQLiteShell.run(migrated, "PRAGMA foreign_key_check").isEmpty)
    }

    @Test func aFailedMigrationLeavesTheVersion1DatabaseAsItWas() async throws {
        let dir = try TempDirectory()
        let path = try Self.makeVersion1(dir)
        // A table in the way of the migration's CREATE TABLE makes it fail halfway through.
        try SQLiteShell.run(path, "CREATE TABLE request_attempts (x)")
        let schemaBefore = try SQLiteShell.run(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name")

        let error = #expect(throws: RegcodeStoreError.self) { try openStore(path) }
        guard case .cannotOpen(let reportedPath, let reason) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
        #expect(reason.contains("request_attempts"))
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "1")
        #expect(try SQLiteShell.run(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == schemaBefore)
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM pragma_table_info('devices') WHERE name = 'client_address'") == "0")
    }

    // 0, the version after this build's, and one far ahead.
    @Test(arguments: [0, RegcodeStore.schemaVersion + 1, 99] as [Int32])
    func unknownVersionsAreRefusedAndNotMigrated(version: Int32) async throws {
        let dir = try TempDirectory()
        let path = try Self.makeVersion1(dir)
        try SQLiteShell.run(path, "PRAGMA user_version = \(version)")
        let schemaBefore = try SQLiteShell.run(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name")

        let error = #expect(throws: RegcodeStoreError.self) { try openStore(path) }
        #expect(error == .unsupportedSchemaVersion(path: path, found: version, supported: RegcodeStore.schemaVersion))
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "\(version)")
        #expect(try SQLiteShell.run(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == schemaBefore)
        let readOnly = #expect(throws: RegcodeStoreError.self) { try RegcodeStore(readingOnly: path, logger: quietLogger) }
        #expect(readOnly == .unsupportedSchemaVersion(path: path, found: version, supported: RegcodeStore.schemaVersion))
    }

    @Test func aReadOnlyStoreReadsAVersion1FileWithoutMigratingIt() async throws {
        let dir = try TempDirectory()
        let path = try Self.makeVersion1(dir)
        let store = try RegcodeStore(readingOnly: path, logger: quietLogger)
        #expect(store.fileSchemaVersion == 1)
        #expect(try await store.requestAttempts(device: nil, sinceEpochMs: nil).isEmpty)
        let devices = try await store.deviceRecordSummaries()
        #expect(devices.map(\.name) == ["stb-1", "stb-2"])
        #expect(devices.map(\.codesIssued) == [2, 0])
        #expect(devices.map(\.clientAddress) == [nil, nil])
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: nil).count == 2)
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "1")
    }
}
