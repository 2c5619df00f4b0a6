import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

/// A database file written by the last release before single sign-on (schema 2, commit 26c40db:
/// three devices logged in with `--mvpd Comcast_SSO` on the embedded simulator) opens, migrates in
/// place, keeps every row and device, and takes apps and shared tokens afterwards.
@Suite struct ReleaseDatabaseMigrationTests {
    static func copyOfReleaseFile(_ dir: TempDirectory) throws -> String {
        let fixture = try #require(Bundle.module.url(forResource: "release-26c40db", withExtension: "sqlite", subdirectory: "Fixtures"))
        let path = dir.path("release.sqlite")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        return path
    }

    @Test func aSchema2FileOfTheLastReleaseMigratesInPlace() async throws {
        let dir = try TempDirectory()
        let path = try Self.copyOfReleaseFile(dir)
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "2")
        let tables = ["devices", "client_credentials", "access_tokens", "codes", "auth_profiles", "poll_attempts", "request_attempts"]
        var before: [String: String] = [:]
        // The release's own columns: later schemas add some (auth_profiles.type, devices.oauth_state), which the
        // migration fills with their defaults.
        var released: [String: String] = [:]
        for table in tables {
            released[table] = try SQLiteShell.run(path, "SELECT group_concat(name, ', ') FROM pragma_table_info('\(table)')")
        }
        func columns(_ table: String) -> String { released[table] ?? "*" }
        for table in tables { before[table] = try SQLiteShell.run(path, "SELECT \(columns(table)) FROM \(table) ORDER BY rowid") }
        let eventsBefore = try SQLiteShell.run(path, "SELECT seq, device, time, name, args FROM events ORDER BY seq")

        let store = try openStore(path)
        #expect(try SQLiteShell.run(path, "PRAGMA user_version") == "\(RegcodeStore.schemaVersion)")
        for table in tables {
            #expect(try SQLiteShell.run(path, "SELECT \(columns(table)) FROM \(table) ORDER BY rowid") == before[table], "\(table)")
        }
        #expect(try SQLiteShell.run(path, "SELECT seq, device, time, name, args FROM events ORDER BY seq") == eventsBefore)
        #expect(try SQLiteShell.run(path, "PRAGMA integrity_check") == "ok")
        #expect(try SQLiteShell.run(path, "PRAGMA foreign_key_check").isEmpty)

        // The devices come back as they were: one plain app each, logged in, nothing shared.
        let devices = try await store.loadDevices()
        #expect(devices.map(\.name).sorted() == ["stb-1", "stb-2", "stb-3"])
        for device in devices {
            #expect(device.snapshot.profile?.mvpd == "Comcast_SSO")
            #expect(device.apps.isEmpty)
            #expect(device.tokens.isEmpty)
            #expect(device.settings.apps.isEmpty)
        }
        let events = try await store.events(after: 0, devices: nil, names: nil, limit: 100)
        #expect(events.count == 21)
        #expect(events.allSatisfy { $0.app == DeviceStep.defaultApp })

        // The migrated file takes the new tables' rows.
        var device = try #require(devices.first)
        let app = AppConfiguration(id: "A", bundleId: "com.x.y.AppA", teamId: "T1").hosted(defaultRequestor: "REF30")
        device.apps = [StoredApp(app: app)]
        try await store.saveDevice(device)
        let profile = try #require(device.snapshot.profile)
        let token = SharedToken(
            metadata: StoredToken(
                domain: .team("T1"),
                boundDeviceId: device.deviceID,
                requestor: "REF30",
                mvpd: profile.mvpd,
                creatorApp: "com.x.y.AppA",
                notAfter: profile.expiresEpochMs,
                formatGeneration: .legacy
            ),
            profile: profile,
            creatorAppID: "A"
        )
        let stored = try await store.apply([
            {
                var step = DeviceStep(device: device.name, app: "A", events: [.setRequestorComplete(1)], epochMs: 1)
                step.tokens = [token]
                return step
            }()
        ])
        #expect(stored.first?.app == "A")
        #expect(try await store.tokens(of: device.name) == [token])
        #expect(try await store.loadDevices().first { $0.name == device.name }?.apps.map(\.app) == [app])
    }
}
