import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@Suite struct DeviceStateTests {
    @Test func snapshotRoundTripsThroughApplyAndLoad() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        var device = makeDevice("stb-1", seed: UInt64.max - 5)

        var snapshot = DeviceSnapshot()
        snapshot.phase = .polling
        snapshot.credentials = ClientCredentials(clientID: "client-1", clientSecret: "client-secret-1")
        snapshot.accessToken = AccessToken(token: "access-token-1", expiresEpochMs: t0 + 86_400_000)
        snapshot.mvpds = [
            MVPD(id: "Cablevision", displayName: "Optimum", logoURL: "https://logo.example/o.png"),
            MVPD(id: "DTV", displayName: "DIRECTV"),
        ]
        snapshot.selectedMVPD = "Cablevision"
        snapshot.code = IssuedCode(code: "ABC1234", expiresEpochMs: t0 + 1_800_000, mvpd: "Cablevision")
        snapshot.profile = AuthProfile(mvpd: "DTV", userID: "user-9", expiresEpochMs: t0 + 3_600_000)
        snapshot.options = ["ap_vi": "visitor-1", "device_info": "eyJ9"]
        snapshot.renewals = 2

        do {
            let store = try openStore(path)
            try await store.saveDevice(device)
            _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: snapshot, epochMs: t0)])
        }
        let loaded = try await openStore(path).loadDevices()
        device.snapshot = snapshot
        #expect(loaded == [device])

        // nil members delete their rows and load back as nil.
        let store = try openStore(path)
        var cleared = snapshot
        cleared.phase = .ready
        cleared.credentials = nil
        cleared.accessToken = nil
        cleared.mvpds = nil
        cleared.selectedMVPD = nil
        cleared.code = nil
        cleared.profile = nil
        cleared.options = [:]
        cleared.renewals = 0
        _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: cleared, epochMs: t0 + 1_000)])
        #expect(try await store.loadDevices().first?.snapshot == cleared)
        for table in ["client_credentials", "access_tokens", "auth_profiles"] {
            #expect(try SQLiteShell.run(path, "SELECT count(*) FROM \(table)") == "0", "\(table)")
        }
    }

    @Test func devicesThatDifferOnlyByNameStoreOneSettingsTextAndLoadTheirOwnNames() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let devices = (1...3).map { makeDevice("stb-\($0)", seed: UInt64($0)) }
        try await openStore(path).saveDevices(devices)
        // The text leaves the name out, so a load decodes the fleet's settings once.
        let texts = try SQLiteShell.run(path, "SELECT DISTINCT settings FROM devices")
        #expect(texts.split(separator: "\n").count == 1)
        #expect(!texts.contains("stb-"))
        let loaded = try await openStore(path).loadDevices()
        #expect(loaded == devices)
        #expect(loaded.map(\.settings.name) == ["stb-1", "stb-2", "stb-3"])
    }

    @Test func settingsWrittenWithTheirNameStillLoad() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let device = makeDevice("stb-1")
        try await openStore(path).saveDevice(device)
        // As an earlier release wrote the column: the name inside.
        _ = try SQLiteShell.run(path, "UPDATE devices SET settings = json_set(settings, '$.name', 'stb-1')")
        #expect(try SQLiteShell.run(path, "SELECT settings FROM devices").contains("stb-1"))
        #expect(try await openStore(path).loadDevices() == [device])
    }

    @Test func newDeviceStoresItsSnapshot() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        var device = makeDevice("stb-1")
        device.snapshot = pollingSnapshot(code: "NEW0001", expires: t0 + 60_000)
        device.snapshot.credentials = ClientCredentials(clientID: "c", clientSecret: "s")
        try await store.saveDevice(device)
        #expect(try await store.loadDevices() == [device])
    }

    @Test func codeStatusTransitions() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        let expires = t0 + 600_000

        func step(_ snapshot: DeviceSnapshot, at time: Int64, ending: (String, CodeOutcome)? = nil) async throws {
            let endedCodes = ending.map { [CodeEnding(code: $0.0, outcome: $0.1)] } ?? []
            _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: snapshot, endedCodes: endedCodes, epochMs: time)])
        }
        var ready = DeviceSnapshot()
        ready.phase = .ready

        // A new code replaces a valid one.
        try await step(pollingSnapshot(code: "CODE001", expires: expires), at: t0)
        try await step(pollingSnapshot(code: "CODE002", expires: expires + 1), at: t0 + 1_000, ending: ("CODE001", .replaced))
        // The same code again changes nothing.
        try await step(pollingSnapshot(code: "CODE002", expires: expires + 1), at: t0 + 2_000)
        // Cancelled: the code goes away before its expiry, without a new profile.
        try await step(ready, at: t0 + 3_000, ending: ("CODE002", .cancelled))
        // Expired: the code goes away at or after its expiry.
        try await step(pollingSnapshot(code: "CODE003", expires: t0 + 10_000), at: t0 + 4_000)
        try await step(ready, at: t0 + 10_000, ending: ("CODE003", .expired))
        // Authenticated: the code goes away and a new profile arrives.
        try await step(pollingSnapshot(code: "CODE004", expires: expires), at: t0 + 11_000)
        var authenticated = DeviceSnapshot()
        authenticated.phase = .authenticated
        authenticated.profile = AuthProfile(mvpd: "Cablevision", userID: "u1", expiresEpochMs: t0 + 86_400_000)
        try await step(authenticated, at: t0 + 12_000, ending: ("CODE004", .authenticated))
        // A re-login that gave up keeps the old profile: that is not an authentication (and a
        // failed code is stored as cancelled).
        var relogin = pollingSnapshot(code: "CODE005", expires: expires)
        relogin.profile = authenticated.profile
        try await step(relogin, at: t0 + 13_000)
        try await step(authenticated, at: t0 + 14_000, ending: ("CODE005", .failed(reason: "gave up")))

        let rows = try SQLiteShell.run(path, "SELECT code, status, issued_at - \(t0), ifnull(ended_at - \(t0), '-') FROM codes ORDER BY id")
        #expect(
            rows == """
                CODE001|replaced|0|1000
                CODE002|cancelled|1000|3000
                CODE003|expired|4000|10000
                CODE004|authenticated|11000|12000
                CODE005|cancelled|13000|14000
                """
        )
        #expect(try await store.loadDevices().first?.snapshot == authenticated)
    }

    @Test func sameCodeWithNewDetailsIsUpdatedInPlace() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "SAME001", expires: t0 + 1_000), epochMs: t0)])
        let extended = pollingSnapshot(code: "SAME001", expires: t0 + 9_000)
        _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: extended, epochMs: t0 + 500)])
        #expect(try SQLiteShell.run(path, "SELECT code, status, expires_at - \(t0) FROM codes") == "SAME001|pending|9000")
        #expect(try await store.loadDevices().first?.snapshot == extended)
    }

    @Test func removingDeviceCascades() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        var snapshot = pollingSnapshot(code: "CODE001", expires: t0 + 60_000)
        snapshot.credentials = ClientCredentials(clientID: "c", clientSecret: "s")
        snapshot.accessToken = AccessToken(token: "t", expiresEpochMs: t0 + 60_000)
        snapshot.profile = AuthProfile(mvpd: "Cablevision", userID: nil, expiresEpochMs: t0 + 60_000)
        _ = try await store.apply([
            DeviceStep(device: "stb-1", snapshot: snapshot, polls: [poll("CODE001", at: t0)], events: [.setRequestorComplete(1)], epochMs: t0),
            DeviceStep(device: "stb-2", snapshot: snapshot, epochMs: t0),
        ])

        #expect(try await store.removeDevice(named: "stb-1"))
        #expect(try await store.removeDevice(named: "stb-1") == false)
        #expect(try await store.deviceID(named: "stb-1") == nil)
        #expect(try await store.deviceID(named: "stb-2") == "id-stb-2")
        for table in ["client_credentials", "access_tokens", "codes", "auth_profiles"] {
            #expect(try SQLiteShell.run(path, "SELECT group_concat(device) FROM \(table)") == "stb-2", "\(table)")
        }
        // History stays.
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).count == 1)
        #expect(try await store.events(after: 0, devices: ["stb-1"], names: nil, limit: 10).count == 1)
    }

    @Test func saveDeviceKeepsDeviceIDAndReplacesConfigurationAndState() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        try await store.saveDevice(makeDevice("stb-1", deviceID: "original-id"))
        var snapshot = pollingSnapshot(code: "CODE001", expires: t0 + 600_000_000_000)
        snapshot.credentials = ClientCredentials(clientID: "c", clientSecret: "s")
        _ = try await store.apply([DeviceStep(device: "stb-1", snapshot: snapshot, epochMs: t0)])

        // Re-saving the loaded device changes nothing.
        let loadedOnce = try #require(try await store.loadDevices().first)
        try await store.saveDevice(loadedOnce)
        #expect(try await store.loadDevices() == [loadedOnce])
        #expect(try SQLiteShell.run(path, "SELECT code, status FROM codes") == "CODE001|pending")

        // A reset: new configuration, empty state, attempted new id.
        var changed = makeDevice("stb-1", deviceID: "other-id", seed: 99)
        changed.scenario = .idle
        changed.settings.requestor = "NBC"
        changed.settings.profile = .v1
        changed.fleet = "lab"
        changed.addedAtRuntime = true
        try await store.saveDevice(changed)

        let loaded = try #require(try await store.loadDevices().first)
        var expected = changed
        expected.deviceID = "original-id"
        #expect(loaded == expected)
        #expect(try await store.deviceID(named: "stb-1") == "original-id")
        #expect(try SQLiteShell.run(path, "SELECT code, status FROM codes") == "CODE001|cancelled")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM client_credentials") == "0")
        #expect(try SQLiteShell.run(path, "SELECT requestor, profile, scenario, fleet, added_at_runtime FROM devices") == "NBC|v1|idle|lab|1")
    }

    @Test func secretsAreNotStored() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try openStore(path)
        let statement = "software-statement-secret-value"
        let keys = SigningKeys(publicKey: "public-key-secret", secret: "hmac-secret-value")
        var device = makeDevice("stb-1")
        device.settings = makeSettings("stb-1", statement: statement, keys: keys)
        try await store.saveDevice(device)
        try await store.saveDevice(device)

        let settingsColumn = try SQLiteShell.run(path, "SELECT settings FROM devices")
        #expect(settingsColumn.contains("REF30"))
        for secret in [statement, keys.publicKey, keys.secret] {
            #expect(!settingsColumn.contains(secret))
        }
        #expect(!settingsColumn.contains("softwareStatement"))
        #expect(!settingsColumn.contains("signingKeys"))

        let loaded = try #require(try await store.loadDevices().first)
        #expect(loaded.settings.softwareStatement == nil)
        #expect(loaded.settings.signingKeys == nil)
        var expected = device.settings
        expected.softwareStatement = nil
        expected.signingKeys = nil
        #expect(loaded.settings == expected)
    }

    @Test func summariesShowCodeAndPolls() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        _ = try await store.apply([
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "OLD0001", expires: t0 + 60_000), epochMs: t0),
            DeviceStep(device: "stb-1", polls: [poll("OLD0001", at: t0 + 100)], epochMs: t0 + 100),
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "CODE001", expires: t0 + 90_000), epochMs: t0 + 1_000),
            DeviceStep(device: "stb-1", polls: [poll("CODE001", at: t0 + 1_100)], epochMs: t0 + 1_100),
            DeviceStep(device: "stb-1", polls: [poll("CODE001", at: t0 + 6_100, status: 429, outcome: .throttled)], epochMs: t0 + 6_100),
        ])

        let summaries = try await store.deviceSummaries()
        #expect(
            summaries == [
                DeviceSummary(
                    name: "stb-1",
                    state: .polling,
                    pendingCode: "CODE001",
                    codeExpiresEpochMs: t0 + 90_000,
                    pollsForCode: 2,
                    lastHTTPStatus: 429,
                    lastPollEpochMs: t0 + 6_100
                ),
                DeviceSummary(
                    name: "stb-2",
                    state: .new,
                    pendingCode: nil,
                    codeExpiresEpochMs: nil,
                    pollsForCode: 0,
                    lastHTTPStatus: nil,
                    lastPollEpochMs: nil
                ),
            ]
        )
    }

    @Test func pollAttemptsFilterByDeviceAndTime() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        try await store.saveDevice(makeDevice("stb-2"))
        let a = poll("A", at: t0)
        let b = poll("B", at: t0 + 10, status: nil, outcome: .transportError)
        let c = poll("A", at: t0 + 20, outcome: .authenticated)
        _ = try await store.apply([
            DeviceStep(device: "stb-1", polls: [a], epochMs: t0),
            DeviceStep(device: "stb-2", polls: [b], epochMs: t0 + 10),
            DeviceStep(device: "stb-1", polls: [c], epochMs: t0 + 20),
        ])
        #expect(
            try await store.pollAttempts(device: nil, sinceEpochMs: nil) == [
                StoredPollAttempt(device: "stb-1", attempt: a),
                StoredPollAttempt(device: "stb-2", attempt: b),
                StoredPollAttempt(device: "stb-1", attempt: c),
            ]
        )
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).map(\.attempt) == [a, c])
        #expect(try await store.pollAttempts(device: nil, sinceEpochMs: t0 + 10).map(\.attempt) == [b, c])
        #expect(try await store.pollAttempts(device: "stb-2", sinceEpochMs: t0 + 11).isEmpty)
    }

    @Test func stepsForUnknownDevicesKeepTheirLogs() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevice(makeDevice("stb-1"))
        let stored = try await store.apply([
            DeviceStep(
                device: "gone",
                snapshot: pollingSnapshot(code: "X", expires: t0 + 1),
                polls: [poll("X", at: t0)],
                events: [.setRequestorComplete(1)],
                epochMs: t0
            ),
            DeviceStep(device: "stb-1", events: [.setRequestorComplete(0)], epochMs: t0),
        ])
        #expect(stored.map(\.seq) == [1, 2])
        #expect(try await store.loadDevices().map(\.name) == ["stb-1"])
        #expect(try await store.pollAttempts(device: "gone", sinceEpochMs: nil).count == 1)
    }
}
