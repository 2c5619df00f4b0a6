import AccessEnablerAPI
import RegcodeEngine
import RegcodeTestSupport
import Testing

@testable import DeviceFleet

/// A held fleet (storage cannot keep up) takes no new work, on a manual clock: due polls wait and
/// are counted, AccessEnabler calls are refused, calls already in flight still answer, and a
/// release sends what waited, late, in order.
@Suite struct HoldTests {
    typealias TestFleet = Fleet

    /// Waits until the fleet has deferred `count` timers of the current hold.
    static func untilDeferred(_ count: Int, _ fleet: TestFleet) async {
        while await fleet.deferredTimerCount < count { await Task.yield() }
    }

    @Test func duePollsWaitWhileHeldAndFireLateOnRelease() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            for name in ["stb-1", "stb-2"] {
                try await fleet.add(SchedulerTests.resumed(name, clock: clock, seed: 3))
            }
            await fleet.hold(reason: "storage failing")
            #expect(await fleet.holdReason == "storage failing")
            // Both first polls (spread over the 5 s interval) come due while held: nothing is
            // sent, both are counted once however long the hold lasts.
            clock.advance(by: .seconds(10))
            await Self.untilDeferred(2, fleet)
            clock.advance(by: .seconds(30))
            #expect(backend.callCount == 0)
            #expect(await fleet.holdTotals == HoldTotals(holds: 1, deferredPolls: 2, deferredTimers: 2, deferredCalls: 0))

            // An app's call is refused, not queued.
            await #expect(throws: FleetError.held("storage failing")) {
                try await fleet.send(.checkAuthentication, to: "stb-1")
            }

            await fleet.release()
            #expect(await fleet.holdReason == nil)
            var devices: Set<String> = []
            for _ in 0..<2 {
                let call = await backend.nextCall()
                devices.insert(call.device)
                backend.answer(call, .success(.profile(nil)))
                let poll = try #require(await sink.nextStep { !$0.polls.isEmpty }.polls.first)
                // Sent on release, 30 s after it was planned: the pause shows as lateness.
                #expect(poll.sentEpochMs == clock.epochMillisecondsNow)
                #expect(poll.sentEpochMs - poll.plannedEpochMs >= 30_000)
            }
            #expect(devices == ["stb-1", "stb-2"])
            // Each late poll's successor was planned an interval after it, long past: one
            // catch-up poll each, then the schedule is back to one per interval.
            for _ in 0..<2 {
                let call = await backend.nextCall()
                backend.answer(call, .success(.profile(nil)))
            }
            #expect(backend.callCount == 4)
        }
    }

    @Test func callsInFlightAnswerWhileHeldAndTheirFollowUpsWait() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(SchedulerTests.resumed("stb-1", clock: clock, seed: 5))
            clock.advance(to: try #require(await fleet.nextTimerDeadline))
            let poll = await backend.nextCall()
            await fleet.hold(reason: "backlog at its bound")
            // The poll answered while held is still handed over for storage.
            backend.answer(poll, .success(.profile(nil)))
            let step = await sink.nextStep { !$0.polls.isEmpty }
            #expect(step.polls.count == 1)
            // Its next poll comes due while held and waits.
            clock.advance(to: try #require(await fleet.nextTimerDeadline))
            await Self.untilDeferred(1, fleet)
            #expect(backend.callCount == 1)
            await fleet.release()
            let next = await backend.nextCall()
            #expect(next.request == .pollProfile(code: "CODE001", mvpd: "Cablevision"))
            backend.answer(next, .success(.profile(nil)))
        }
    }

    @Test func aRemovedDeviceLeavesNothingToFireOnRelease() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(SchedulerTests.resumed("stb-1", clock: clock, seed: 9))
            await fleet.hold(reason: "storage failing")
            clock.advance(by: .seconds(10))
            await Self.untilDeferred(1, fleet)
            #expect(await fleet.remove("stb-1"))
            #expect(await fleet.deferredTimerCount == 0)
            await fleet.release()
            clock.advance(by: .seconds(120))
            // The first call after the release is the device added afterwards: stb-1 sent nothing.
            try await fleet.add(SchedulerTests.resumed("stb-2", clock: clock, seed: 9))
            clock.advance(to: try #require(await fleet.nextTimerDeadline))
            let call = await backend.nextCall()
            #expect(call.device == "stb-2")
            #expect(backend.callCount == 1)
            backend.answer(call, .success(.profile(nil)))
        }
    }

    @Test func callsPastTheBoundOfADeviceAreRefusedNotQueued() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: StepStream(), maxPendingPerDevice: 8, logger: .quiet)
        try await withRunningFleet(fleet) {
            // A new device has no MVPD list: calls wait for setRequestor, as AccessEnabler queues them.
            var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
            settings.softwareStatement = "statement"
            try await fleet.add(.init(settings: settings, deviceID: "id-1", snapshot: DeviceSnapshot(), scenario: .idle, seed: 1))
            for _ in 0..<8 {
                try await fleet.send(.checkAuthentication, to: "stb-1")
            }
            await #expect(throws: FleetError.busy(device: "stb-1", pending: 8)) {
                try await fleet.send(.checkAuthentication, to: "stb-1")
            }
            // The refused call did not join the queue (CallBoundTests: setRequestor is never refused by the bound).
            #expect(await fleet.pendingWork(of: "stb-1") == 8)
        }
    }
}
