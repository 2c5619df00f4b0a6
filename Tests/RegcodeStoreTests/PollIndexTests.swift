import Foundation
import InMemoryLogging
import Logging
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@Suite struct PollIndexTests {
    static let master = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    static let indexQuery = "SELECT count(*) FROM sqlite_master WHERE name = 'poll_attempts_by_device'"

    /// Three devices: one polling its second code after a poll of its first, one that polled and was
    /// authenticated, one that never polled.
    static func fill(_ store: RegcodeStore) async throws {
        for name in ["stb-1", "stb-2", "stb-3"] { try await store.saveDevice(makeDevice(name)) }
        var authenticated = pollingSnapshot(code: "CODE002", expires: t0 + 60_000)
        authenticated.phase = .authenticated
        authenticated.code = nil
        _ = try await store.apply([
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "OLD0001", expires: t0 + 60_000), epochMs: t0),
            DeviceStep(device: "stb-2", snapshot: pollingSnapshot(code: "CODE002", expires: t0 + 60_000), epochMs: t0),
            DeviceStep(device: "stb-1", polls: [poll("OLD0001", at: t0 + 100)], epochMs: t0 + 100),
            DeviceStep(device: "stb-2", polls: [poll("CODE002", at: t0 + 150)], epochMs: t0 + 150),
            DeviceStep(device: "stb-1", snapshot: pollingSnapshot(code: "CODE001", expires: t0 + 90_000), epochMs: t0 + 1_000),
            DeviceStep(device: "stb-1", polls: [poll("CODE001", at: t0 + 1_100)], epochMs: t0 + 1_100),
            DeviceStep(device: "stb-2", polls: [poll("CODE002", at: t0 + 5_150, outcome: .authenticated)], epochMs: t0 + 5_150),
            DeviceStep(device: "stb-2", snapshot: authenticated, epochMs: t0 + 5_150),
            DeviceStep(device: "stb-1", polls: [poll("CODE001", at: t0 + 6_100, status: 429, outcome: .throttled)], epochMs: t0 + 6_100),
        ])
    }

    @Test func noneDropsTheIndexAndDeviceBuildsItBackAsSchemaFileHasIt() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let shellDB = dir.path("shell.db")
        try SQLiteShell.run(shellDB, input: schemaFileURL)
        let schema = try SQLiteShell.run(shellDB, Self.master)

        try await Self.fill(try openStore(path))
        _ = try RegcodeStore(path: path, pollIndex: .none, logger: quietLogger)
        #expect(try SQLiteShell.run(path, Self.indexQuery) == "0")
        #expect(try SQLiteShell.run(path, Self.master) != schema)

        // Opening with `none` again changes nothing; `device` gives the file the schema of a new one.
        _ = try RegcodeStore(path: path, pollIndex: .none, logger: quietLogger)
        #expect(try SQLiteShell.run(path, Self.indexQuery) == "0")
        _ = try RegcodeStore(path: path, pollIndex: .device, logger: quietLogger)
        #expect(try SQLiteShell.run(path, Self.master) == schema)
        #expect(try SQLiteShell.run(path, "PRAGMA integrity_check") == "ok")
    }

    @Test func aChangeToAnExistingFileIsSaidOnceAndANewFileIsQuiet() async throws {
        let dir = try TempDirectory()
        let capture = InMemoryLogHandler()
        let logger = Logger(label: "poll-index") { _ in capture }
        func notices() -> [String] { capture.entries.filter { $0.level == .notice }.map { "\($0.message)" } }

        _ = try RegcodeStore(path: dir.path("new.db"), pollIndex: .none, logger: logger)
        #expect(notices() == [])

        let path = dir.path("state.db")
        try await Self.fill(try openStore(path))
        _ = try RegcodeStore(path: path, pollIndex: .none, logger: logger)
        #expect(notices() == ["poll log index changed"])
        _ = try RegcodeStore(path: path, pollIndex: .none, logger: logger)
        #expect(notices() == ["poll log index changed"])
        capture.clear()
        _ = try RegcodeStore(path: path, pollIndex: .device, logger: logger)
        #expect(notices() == ["building the poll log's index by device", "poll log index changed"])
        #expect(capture.entries.allSatisfy { $0.metadata["poll_index"] == nil || $0.metadata["poll_index"] == "device" })
    }

    @Test func perDeviceViewsReadTheSameWithoutTheIndex() async throws {
        let dir = try TempDirectory()
        let indexed = try openStore(dir.path("indexed.db"))
        let scanned = try RegcodeStore(path: dir.path("scanned.db"), pollIndex: .none, logger: quietLogger)
        try await Self.fill(indexed)
        try await Self.fill(scanned)

        let summaries = try await scanned.deviceSummaries()
        #expect(summaries == (try await indexed.deviceSummaries()))
        #expect(summaries.map(\.pollsForCode) == [2, 0, 0])
        #expect(summaries.map(\.lastHTTPStatus) == [429, 200, nil])
        #expect(summaries.map(\.lastPollEpochMs) == [t0 + 6_100, t0 + 5_150, nil])
        #expect(summaries.map(\.pendingCode) == ["CODE001", nil, nil])

        for (device, listed) in zip(["stb-1", "stb-2", "stb-3"], summaries) {
            #expect(try await scanned.deviceSummary(named: device) == listed)
            #expect(try await indexed.deviceSummary(named: device) == listed)
            let recent = try await scanned.recentPolls(of: device, limit: 2)
            #expect(recent == (try await indexed.recentPolls(of: device, limit: 2)), "\(device)")
            let log = try await scanned.pollAttempts(device: device, sinceEpochMs: t0 + 1_000)
            #expect(log == (try await indexed.pollAttempts(device: device, sinceEpochMs: t0 + 1_000)), "\(device)")
        }
        #expect(try await scanned.recentPolls(of: "stb-1", limit: 2).map(\.sentEpochMs) == [t0 + 6_100, t0 + 1_100])
        #expect(try await scanned.deviceSummary(named: "stb-9") == nil)
    }
}
