import ControlSocket
import Foundation
import Logging
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import RegcodeTestSupport
import ServiceLifecycleTestKit
import Testing

@testable import RegcodeDaemon

/// Steps that arrive while the pipeline gathers after a write go to SQLite in one transaction.
@Suite struct GroupCommitTests {
    private func step(_ index: Int) -> DeviceStep {
        DeviceStep(
            device: "stb-1",
            polls: [
                PollAttempt(
                    code: "CODE", plannedEpochMs: Int64(index), sentEpochMs: Int64(index), latencyMs: 1, httpStatus: 202,
                    outcome: .pending, nextDelayMs: 5_000
                )
            ],
            epochMs: Int64(index)
        )
    }

    /// Lets the pipeline's task run until `done` holds (bounded: a few thousand turns).
    private func yield(until done: () -> Bool) async {
        for _ in 0..<5_000 where !done() { await Task.yield() }
    }

    @Test(arguments: [true, false]) func stepsArrivingWhileItGathersShareOneWrite(gathering: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var logger = Logger(label: "group-commit-test")
        logger.logLevel = .critical
        // The device is not stored: its polls are kept all the same (see `RegcodeStore.apply`).
        let store = try RegcodeStore(path: directory.appendingPathComponent("state.db").path, logger: logger)
        let counting = FailingStore(store: store)
        let clock = ManualClock()
        var limits = EventPipeline<ManualClock>.Limits()
        limits.gather = gathering ? .milliseconds(2) : .zero
        let pipeline = EventPipeline(store: counting, broadcaster: EventBroadcaster<JSONValue>(), observers: [], limits: limits, clock: clock, logger: logger)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pipeline.run() }
                pipeline.record(step(1))
                await yield { counting.attemptCount == 1 && pipeline.backlog == 0 }
                #expect(counting.attemptCount == 1)
                // One at a time, each given every chance to be written on its own.
                for index in 2...10 {
                    pipeline.record(step(index))
                    await yield { counting.attemptCount == index }
                }
                if gathering {
                    #expect(counting.attemptCount == 1)
                    clock.advance(by: .milliseconds(2))
                    await yield { pipeline.backlog == 0 }
                    #expect(counting.attemptCount == 2)
                } else {
                    // The control: without gathering the same steps go in many writes.
                    #expect(counting.attemptCount > 5)
                }
                trigger.triggerGracefulShutdown()
                clock.advance(by: .milliseconds(2))
                try await group.waitForAll()
            }
        }
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).count == 10)
    }
}
