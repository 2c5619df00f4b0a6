import ControlRPC
import DeviceFleet
import Foundation
import Logging
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeSupport
import RegcodeTestSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

/// A real SQLite store whose writes fail while the test says so, the way a locked database or a
/// full disk makes them fail: the batch's transaction is not even attempted, nothing of it lands.
final class FailingStore: StepStore {
    struct InjectedIOError: Error, CustomStringConvertible {
        var description: String { "disk I/O error (injected)" }
    }

    let store: RegcodeStore
    private let failing = Mutex(false)
    private let attempts = Mutex(0)

    init(store: RegcodeStore) { self.store = store }

    func fail(_ on: Bool) { failing.withLock { $0 = on } }
    var attemptCount: Int { attempts.withLock { $0 } }

    func apply(_ steps: [DeviceStep]) async throws -> [StoredEvent] {
        attempts.withLock { $0 += 1 }
        if failing.withLock({ $0 }) { throw InjectedIOError() }
        return try await store.apply(steps)
    }
}

/// The pipeline's promise when storage fails: nothing dropped, nothing published before it is
/// stored, order and the gap-free sequence kept, and new work held at the bound. Retries wait on
/// a manual clock.
@Suite struct StorageFailureTests {
    /// Sequence numbers the pipeline published, in publication order.
    final class Published: Sendable {
        let seqs = Mutex<[Int64]>([])
    }

    struct Harness {
        let directory: URL
        let store: RegcodeStore
        let failing: FailingStore
        let clock = ManualClock()
        let published = Published()
        let pipeline: EventPipeline<ManualClock>

        init(limits: EventPipeline<ManualClock>.Limits = .init()) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("storage-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var logger = Logger(label: "storage-test")
            logger.logLevel = .critical
            store = try RegcodeStore(path: directory.appendingPathComponent("state.db").path, logger: logger)
            failing = FailingStore(store: store)
            let published = self.published
            pipeline = EventPipeline(
                store: failing,
                broadcaster: EventBroadcaster<EventNotification>(),
                observers: [{ _, stored in published.seqs.withLock { $0 += stored.map(\.seq) } }],
                limits: limits,
                clock: clock,
                logger: logger
            )
        }

        func step(_ index: Int) -> DeviceStep {
            DeviceStep(
                device: "stb-\(index % 4)",
                polls: [
                    PollAttempt(
                        code: "CODE\(index)",
                        plannedEpochMs: Int64(index),
                        sentEpochMs: Int64(index),
                        latencyMs: 1,
                        httpStatus: 202,
                        outcome: .pending,
                        nextDelayMs: 5_000
                    )
                ],
                events: [.setRequestorComplete(Int64(index))],
                epochMs: Int64(index)
            )
        }

        /// Moves the retry clock on until `done` holds (each turn lets the pipeline run).
        func advance(until done: () -> Bool) async {
            while !done() {
                clock.advance(by: .seconds(1))
                await Task.yield()
            }
        }

        func storedStatuses() async throws -> [Int64?] {
            try await store.events(after: 0, devices: nil, names: nil, limit: 10_000).map { $0.args["status"]?.intValue }
        }

        func pollCount() async throws -> Int {
            try await store.pollAttempts(device: nil, sinceEpochMs: nil).count
        }
    }

    @Test func failedWritesAreKeptRetriedAndPublishedOnlyOnceStoredInOrder() async throws {
        let h = try Harness()
        defer { try? FileManager.default.removeItem(at: h.directory) }
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await h.pipeline.run() }
                for index in 1...50 { h.pipeline.record(h.step(index)) }
                await h.advance { h.pipeline.backlog == 0 }
                #expect(h.published.seqs.withLock { $0 } == Array(1...50))

                h.failing.fail(true)
                for index in 51...80 { h.pipeline.record(h.step(index)) }
                await h.advance { h.failing.attemptCount >= 5 }
                // While failing: kept in memory, nothing published, the failure visible.
                #expect(h.published.seqs.withLock { $0.count } == 50)
                #expect(h.pipeline.health.failure?.error == "disk I/O error (injected)")
                #expect(h.pipeline.health.failedWrites >= 3)
                #expect(try await h.storedStatuses().count == 50)
                // More steps arrive during the outage; they queue behind the failed ones.
                for index in 81...120 { h.pipeline.record(h.step(index)) }

                h.failing.fail(false)
                await h.advance { h.pipeline.backlog == 0 && h.pipeline.health.failure == nil }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        // Every step stored once, in the order recorded, under a gap-free sequence, and published after.
        #expect(try await h.storedStatuses() == (1...120).map { Int64($0) })
        #expect(h.published.seqs.withLock { $0 } == Array(1...120))
        #expect(try await h.pollCount() == 120)
        #expect(h.pipeline.health.failure == nil)
    }

    @Test func theBacklogBoundHoldsWorkUntilStorageCatchesUp() async throws {
        let h = try Harness(limits: .init(holdAt: 40, releaseAt: 10))
        defer { try? FileManager.default.removeItem(at: h.directory) }
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await h.pipeline.run() }
                var changes = h.pipeline.healthChanges.makeAsyncIterator()
                h.failing.fail(true)
                for index in 1...39 { h.pipeline.record(h.step(index)) }
                await h.advance { h.failing.attemptCount >= 2 }
                #expect(h.pipeline.health.holding == false)
                h.pipeline.record(h.step(40))
                // The bound is reached: the watcher is told to hold new work.
                var change = await changes.next()
                while change?.holding != true { change = await changes.next() }
                #expect(change?.backlog == 40)
                #expect(change?.failure != nil)
                #expect(change?.summary?.contains("devices paused") == true)

                h.failing.fail(false)
                await h.advance { h.pipeline.backlog == 0 }
                while change?.holding != false { change = await changes.next() }
                #expect(change?.failure == nil)
                #expect(h.pipeline.health.holds == 1)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(try await h.storedStatuses() == (1...40).map { Int64($0) })
    }

    @Test func aStoppingPipelineRetriesWithinItsGraceThenSaysWhatWasNotStored() async throws {
        let h = try Harness(limits: .init(shutdownGrace: .seconds(20)))
        defer { try? FileManager.default.removeItem(at: h.directory) }
        h.failing.fail(true)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await h.pipeline.run() }
                for index in 1...10 { h.pipeline.record(h.step(index)) }
                trigger.triggerGracefulShutdown()
                await h.advance { h.failing.attemptCount >= 3 }
                // Storage comes back within the grace: everything lands before run() returns.
                h.failing.fail(false)
                group.addTask { await h.advance { h.pipeline.backlog == 0 } }
                try await group.waitForAll()
            }
        }
        #expect(try await h.storedStatuses() == (1...10).map { Int64($0) })
    }
}
