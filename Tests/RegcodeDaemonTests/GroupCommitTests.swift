import ControlRPC
import Foundation
import Logging
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeSupport
import RegcodeTestSupport
import ServiceLifecycleTestKit
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

/// Steps that arrive while the pipeline gathers after a write go to SQLite in one transaction; steps with
/// events do not wait for company.
@Suite struct GroupCommitTests {
    private func step(_ index: Int) -> DeviceStep {
        DeviceStep(
            device: "stb-1",
            polls: [
                PollAttempt(
                    code: "CODE",
                    plannedEpochMs: Int64(index),
                    sentEpochMs: Int64(index),
                    latencyMs: 1,
                    httpStatus: 202,
                    outcome: .pending,
                    nextDelayMs: 5_000
                )
            ],
            epochMs: Int64(index)
        )
    }

    /// Lets the pipeline's task run until `done` holds (bounded: a few thousand turns). For what must *not* happen:
    /// every chance is given, and the check after it says whether it did.
    private func yield(until done: () -> Bool) async {
        for _ in 0..<5_000 where !done() { await Task.yield() }
    }

    /// Waits for what must happen: a write runs on the database's own thread, which a busy machine may not schedule
    /// within a few thousand turns. Bounded (20 s of real time) so a write that never comes fails the check after it.
    private func eventually(_ done: () -> Bool) async {
        await yield(until: done)
        let deadline = ContinuousClock.now + .seconds(20)
        while !done(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// A pipeline over a fresh store in a temporary folder, counting its writes, on a manual clock.
    private struct Fixture {
        let directory: URL
        let store: RegcodeStore
        let counting: FailingStore
        let clock = ManualClock()
        let broadcaster = EventBroadcaster<EventNotification>()
        let pipeline: EventPipeline<ManualClock>

        init(gather: Duration) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-commit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var logger = Logger(label: "group-commit-test")
            logger.logLevel = .critical
            // The device is not stored: its polls are kept all the same (see `RegcodeStore.apply`).
            store = try RegcodeStore(path: directory.appendingPathComponent("state.db").path, logger: logger)
            counting = FailingStore(store: store)
            var limits = EventPipeline<ManualClock>.Limits()
            limits.gather = gather
            pipeline = EventPipeline(store: counting, broadcaster: broadcaster, observers: [], limits: limits, clock: clock, logger: logger)
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test(arguments: [true, false]) func stepsArrivingWhileItGathersShareOneWrite(gathering: Bool) async throws {
        let fixture = try Fixture(gather: gathering ? .milliseconds(2) : .zero)
        defer { fixture.remove() }
        let (store, counting, clock, pipeline) = (fixture.store, fixture.counting, fixture.clock, fixture.pipeline)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pipeline.run() }
                pipeline.record(step(1))
                await eventually { counting.attemptCount == 1 && pipeline.backlog == 0 }
                #expect(counting.attemptCount == 1)
                // One at a time, each given every chance to be written on its own.
                for index in 2...10 {
                    pipeline.record(step(index))
                    // Gathering: every chance to be written alone, which must not be taken. The control: each write
                    // is waited for, so none is shared.
                    if gathering {
                        await yield { counting.attemptCount == index }
                    } else {
                        await eventually { counting.attemptCount == index }
                    }
                }
                if gathering {
                    #expect(counting.attemptCount == 1)
                    clock.advance(by: .milliseconds(2))
                    await eventually { pipeline.backlog == 0 && counting.attemptCount >= 2 }
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

    @Test func stepsWithEventsAreWrittenWithoutGathering() async throws {
        let fixture = try Fixture(gather: .milliseconds(2))
        defer { fixture.remove() }
        let (store, counting, clock, pipeline) = (fixture.store, fixture.counting, fixture.clock, fixture.pipeline)
        let subscription = fixture.broadcaster.subscribe()
        func withEvent(_ index: Int) -> DeviceStep {
            var step = step(index)
            step.events = [.setRequestorComplete(1)]
            return step
        }
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pipeline.run() }
                // The clock never moves here: every write below happens without a gather ending.
                for index in 1...3 {
                    pipeline.record(withEvent(index))
                    await eventually { counting.attemptCount == index }
                    #expect(counting.attemptCount == index)
                    #expect(await subscription.next()?.params["seq"]?.intValue == Int64(index))
                }
                #expect(clock.sleeperCount == 0)
                // The first plain step follows a batch with events: written at once. After it, plain steps gather.
                pipeline.record(step(4))
                await eventually { counting.attemptCount == 4 && clock.sleeperCount == 1 }
                #expect(counting.attemptCount == 4)
                #expect(clock.sleeperCount == 1)
                pipeline.record(step(5))
                await yield { counting.attemptCount == 5 }
                #expect(counting.attemptCount == 4)
                clock.advance(by: .milliseconds(2))
                await eventually { pipeline.backlog == 0 && counting.attemptCount >= 5 }
                #expect(counting.attemptCount == 5)
                trigger.triggerGracefulShutdown()
                clock.advance(by: .milliseconds(2))
                try await group.waitForAll()
            }
        }
        #expect(try await store.pollAttempts(device: "stb-1", sinceEpochMs: nil).count == 5)
    }
}
