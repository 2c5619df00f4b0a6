import Foundation
import RegcodeEngine
import RegcodeStore
import Testing

@Suite struct CheckpointTests {
    /// Bytes in the write-ahead log file (0 when there is none).
    private func walBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Enough polls to pass SQLite's automatic checkpoint threshold (1,000 pages) several times.
    private func writeManyPolls(_ store: RegcodeStore) async throws {
        try await store.saveDevice(makeDevice("stb-1"))
        for batch in 0..<100 {
            let polls = (0..<500).map { poll("CODE\(batch)", at: t0 + Int64(batch * 500 + $0)) }
            _ = try await store.apply([DeviceStep(device: "stb-1", polls: polls, epochMs: t0 + Int64(batch))])
        }
    }

    @Test func inTheBackgroundModeCommitsNeverCheckpointAndCheckpointCopiesTheLog() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try RegcodeStore(path: path, walCheckpoints: .background, logger: quietLogger)
        try await writeManyPolls(store)
        let (frames, copied) = try await store.checkpoint()
        // Nothing was copied on the way: every frame written since the schema is still in the log.
        #expect(frames > 2_000)
        #expect(copied == frames)
        // The next writes start the log from its beginning again instead of growing it.
        let grown = walBytes(path)
        try await store.saveDevice(makeDevice("stb-2"))
        _ = try await store.checkpoint()
        #expect(walBytes(path) == grown)
        #expect(try await store.loadDevices().map(\.name) == ["stb-1", "stb-2"])
    }

    /// Writes `batches` batches of 100 polls; with `checkpointing`, checkpoints every 20 batches while
    /// the writer goes on, as the checkpoint service does. Returns the log's size in bytes at the end.
    private func steadyWrites(in dir: TempDirectory, _ name: String, batches: Int, checkpointing: Bool) async throws -> Int {
        let path = dir.path(name)
        let store = try RegcodeStore(path: path, walCheckpoints: .background, logger: quietLogger)
        try await store.saveDevice(makeDevice("stb-1"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            let ticks = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                for batch in 0..<batches {
                    let polls = (0..<100).map { poll("CODE\(batch)", at: t0 + Int64(batch * 100 + $0)) }
                    _ = try await store.apply([DeviceStep(device: "stb-1", polls: polls, epochMs: t0 + Int64(batch))])
                    if batch % 20 == 19 { ticks.continuation.yield() }
                }
                ticks.continuation.finish()
            }
            for await _ in ticks.stream where checkpointing {
                _ = try await store.checkpoint()
            }
            try await group.waitForAll()
        }
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).count == batches * 100)
        return walBytes(path)
    }

    /// A passive checkpoint alone never lets the log start over while commits keep coming: under a
    /// fleet the log grew by hundreds of megabytes a minute.
    @Test func checkpointsDuringSteadyCommitsLetTheLogStartOver() async throws {
        let dir = try TempDirectory()
        let unchecked = try await steadyWrites(in: dir, "unchecked.db", batches: 400, checkpointing: false)
        let checked = try await steadyWrites(in: dir, "checked.db", batches: 400, checkpointing: true)
        // A passive pass alone leaves both logs the same size; restarts keep the checked one at most two thirds
        // of it even when checkpoints are slow (a busy machine coalesces the writer's ticks).
        #expect(checked * 3 < unchecked * 2)
    }

    @Test func onCommitSQLiteKeepsTheLogShort() async throws {
        let dir = try TempDirectory()
        let path = dir.path("state.db")
        let store = try RegcodeStore(path: path, logger: quietLogger)
        try await writeManyPolls(store)
        let (frames, _) = try await store.checkpoint()
        #expect(frames < 1_100)
    }
}
