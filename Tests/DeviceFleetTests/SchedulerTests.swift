import Logging
import RegcodeEngine
import RegcodeTestSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import DeviceFleet

/// The fleet's timer loop and call dispatch on a manual clock: time only moves when a test moves
/// it, and every wait is for something the fleet does (a call arriving, a step recorded), never a sleep.
@Suite struct SchedulerTests {
    typealias TestFleet = Fleet

    @Test func pollsFireExactlyAtTheirPlannedTime() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(Self.resumed("stb-1", clock: clock, seed: 7))
            var planned: [Int64] = []
            for _ in 0..<5 {
                let deadline = try #require(await fleet.nextTimerDeadline)
                clock.advance(to: deadline)
                let call = await backend.nextCall()
                #expect(call.request == .pollProfile(code: "CODE001", mvpd: "Cablevision"))
                backend.answer(call, .success(.profile(nil)))
                let poll = try #require(await sink.nextStep { !$0.polls.isEmpty }.polls.first)
                // Sent the moment the clock reached the deadline: not before, not late.
                #expect(poll.sentEpochMs == clock.epochMilliseconds(at: deadline))
                #expect(poll.plannedEpochMs == poll.sentEpochMs)
                planned.append(poll.plannedEpochMs)
            }
            // After the spread first poll, every next one is the interval (5 s ± 10 %) after the last plan.
            for (earlier, later) in zip(planned, planned.dropFirst()) {
                #expect((4_500...5_500).contains(later - earlier))
            }
        }
    }

    @Test func timersOfSeveralDevicesFireOneByOneAtTheirDeadlines() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            // Added slowest first; their polls interleave.
            let names = ["c": Duration.seconds(30), "b": .seconds(20), "a": .seconds(10)]
            for name in ["c", "b", "a"] {
                try await fleet.add(Self.resumed(name, clock: clock, seed: 11, interval: names[name]!))
            }
            var fired: [String] = []
            var sent: [Int64] = []
            while Set(fired) != Set(names.keys), fired.count < 20 {
                let deadline = try #require(await fleet.nextTimerDeadline)
                clock.advance(to: deadline)
                let call = await backend.nextCall()
                backend.answer(call, .success(.profile(nil)))
                let poll = try #require(await sink.nextStep { !$0.polls.isEmpty }.polls.first)
                // The earliest timer fired, at its deadline, and nothing else was due with it.
                #expect(poll.sentEpochMs == clock.epochMilliseconds(at: deadline))
                #expect(await fleet.requestsOutstanding == 0)
                fired.append(call.device)
                sent.append(poll.sentEpochMs)
            }
            #expect(Set(fired) == Set(names.keys))
            #expect(sent == sent.sorted())
            #expect(backend.callCount == fired.count)
        }
    }

    @Test func timersDueTogetherFireInDeadlineOrder() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        // One call at a time: the rest wait in the FIFO in the order their timers fired.
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, maxConcurrentRequests: 1, logger: .quiet)
        try await withRunningFleet(fleet) {
            let names = (1...4).map { "stb-\($0)" }
            for (index, name) in names.enumerated() {
                try await fleet.add(Self.resumed(name, clock: clock, seed: UInt64(40 + index), interval: .seconds(600)))
            }
            // Every first poll (spread over one interval) is due after one jump.
            clock.advance(by: .seconds(600))
            var planned: [String: Int64] = [:]
            var order: [String] = []
            for _ in names {
                let call = await backend.nextCall()
                backend.answer(call, .success(.profile(nil)))
                let poll = try #require(await sink.nextStep { $0.device == call.device && !$0.polls.isEmpty }.polls.first)
                planned[call.device] = poll.plannedEpochMs
                order.append(call.device)
            }
            #expect(Set(order) == Set(names))
            #expect(order == order.sorted { planned[$0]! < planned[$1]! })
        }
    }

    @Test func anEarlierTimerShortensTheWait() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            // A slow device first: the fleet sleeps towards its far first poll.
            try await fleet.add(Self.resumed("slow", clock: clock, seed: 3, interval: .seconds(600)))
            let far = try #require(await fleet.nextTimerDeadline)
            // Then a fast one whose first poll comes much sooner.
            try await fleet.add(Self.resumed("fast", clock: clock, seed: 3, interval: .seconds(1)))
            let near = try #require(await fleet.nextTimerDeadline)
            try #require(near < far)
            clock.advance(to: near)
            let call = await backend.nextCall()
            #expect(call.device == "fast")
            #expect(clock.now < far)
            backend.answer(call, .success(.profile(nil)))
        }
    }

    @Test func aRemovedDeviceNeverPolls() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(Self.resumed("gone", clock: clock, seed: 1))
            try await fleet.add(Self.resumed("kept", clock: clock, seed: 2))
            await fleet.remove("gone")
            clock.advance(by: .seconds(5))
            let call = await backend.nextCall()
            #expect(call.device == "kept")
            backend.answer(call, .success(.profile(nil)))
            let step = await sink.nextStep { !$0.polls.isEmpty }
            #expect(step.device == "kept")
            #expect(!sink.recorded.contains { $0.device == "gone" && !$0.polls.isEmpty })
            // Both first polls were due in the same pass: had "gone" fired, its call would be outstanding or recorded.
            #expect(await fleet.requestsOutstanding == 0)
            #expect(backend.callCount == 1)
        }
    }

    @Test func atMostTheConfiguredNumberOfCallsRunAndTheRestWaitInOrder() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, maxConcurrentRequests: 2, logger: .quiet)
        try await withRunningFleet(fleet) {
            let names = (1...5).map { "stb-\($0)" }
            for (index, name) in names.enumerated() {
                try await fleet.add(Self.resumed(name, clock: clock, seed: UInt64(index + 1)))
            }
            clock.advance(by: .seconds(5))
            let first = await backend.nextCall()
            let second = await backend.nextCall()
            #expect(await fleet.requestsOutstanding == 5)
            #expect(backend.running == 2)
            var answered = [first.device, second.device]
            var inFlight = [second]
            backend.answer(first, .success(.profile(nil)))
            while answered.count < 5 {
                let next = await backend.nextCall()
                #expect(backend.running <= 2)
                answered.append(next.device)
                inFlight.append(next)
                backend.answer(inFlight.removeFirst(), .success(.profile(nil)))
            }
            for call in inFlight { backend.answer(call, .success(.profile(nil))) }
            #expect(Set(answered) == Set(names))
            #expect(backend.maximumRunning == 2)
        }
    }

    @Test func gracefulShutdownStopsTimersAndStillRecordsTheAnswerInFlight() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await fleet.run() }
                try await fleet.add(Self.resumed("stb-1", clock: clock, seed: 5))
                clock.advance(by: .seconds(5))
                let call = await backend.nextCall()
                trigger.triggerGracefulShutdown()
                // The fleet stops (waits for the shutdown to reach it; no clock involved).
                await fleet.untilStopping()
                await #expect(throws: FleetError.stopped) { try await fleet.send(.checkAuthentication, to: "stb-1") }
                // The call made before the shutdown still answers, and its poll is recorded.
                backend.answer(call, .success(.profile(nil)))
                try await group.waitForAll()
                // run() returned after the answer: its poll is recorded, and no timer fires any more.
                #expect(sink.recorded.flatMap(\.polls).map(\.outcome) == [.abandoned])
                clock.advance(by: .seconds(600))
                #expect(backend.callCount == 1)
                #expect(await fleet.nextTimerDeadline == nil)
            }
        }
    }

    @Test func anAnswerWhileStoppingThatAsksForAnotherCallDoesNotHoldTheStopUp() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await fleet.run() }
            var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
            settings.softwareStatement = "statement"
            try await fleet.add(.init(settings: settings, deviceID: "id-stb-1", scenario: .login, seed: 1))
            let register = await backend.nextCall()
            #expect(register.request == .registerClient(softwareStatement: "statement"))
            group.addTask { await fleet.stop() }
            await fleet.untilStopping()
            // Registered: the engine now wants a token, which a stopping fleet does not ask for.
            backend.answer(register, .success(.registered(ClientCredentials(clientID: "c", clientSecret: "s"))))
            try await group.waitForAll()
            #expect(backend.callCount == 1)
        }
    }

    @Test func cancellingTheRunTaskCancelsTheCallsInFlight() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, logger: .quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await fleet.run() }
            try await fleet.add(Self.resumed("stb-1", clock: clock, seed: 5))
            clock.advance(by: .seconds(5))
            let call = await backend.nextCall()
            // Cancels the task running the fleet (the test's own task goes on).
            group.cancelAll()
            // Nobody answers the call: only its cancellation lets run() return.
            try await group.waitForAll()
            #expect(backend.cancelled == [call.id])
        }
        // The fleet has stopped: nothing is outstanding, it takes no more work and sleeps no more.
        #expect(await fleet.stopping)
        #expect(await fleet.requestsOutstanding == 0)
        await #expect(throws: FleetError.stopped) { try await fleet.send(.checkAuthentication, to: "stb-1") }
        clock.advance(by: .seconds(600))
        #expect(backend.callCount == 1)
        #expect(await fleet.nextTimerDeadline == nil)
    }

    /// A device resuming a stored code (no DCR or configuration calls needed): it only polls.
    static func resumed(_ name: String, clock: ManualClock, seed: UInt64, interval: Duration = .seconds(5)) -> TestFleet.DeviceSpec {
        var settings = DeviceSettings(name: name, requestor: "REF30")
        settings.softwareStatement = "statement"
        settings.polling.interval = interval
        var snapshot = DeviceSnapshot()
        snapshot.mvpds = [MVPD(id: "Cablevision", displayName: "Optimum")]
        snapshot.selectedMVPD = "Cablevision"
        snapshot.credentials = ClientCredentials(clientID: "client", clientSecret: "secret")
        let now = clock.epochMillisecondsNow
        snapshot.accessToken = AccessToken(token: "token", expiresEpochMs: now + 86_400_000)
        snapshot.code = IssuedCode(code: "CODE001", expiresEpochMs: now + 3_600_000, mvpd: "Cablevision")
        return .init(settings: settings, deviceID: "id-\(name)", snapshot: snapshot, scenario: .idle, seed: seed)
    }
}

/// A backend that holds every call until the test answers it, and tells the test when one arrives.
final class GatedBackend: BackendExecutor {
    struct Call: Sendable {
        var id: Int
        var device: String
        var request: BackendRequest
    }

    private struct State {
        var waiting: [Int: CheckedContinuation<Result<BackendResponse, BackendFailure>, Never>] = [:]
        var callCount = 0
        var running = 0
        var maximumRunning = 0
        var cancelled: [Int] = []
    }

    private let state = Mutex(State())
    private let arrivals: AsyncStream<Call>
    private let arrival: AsyncStream<Call>.Continuation

    init() {
        (arrivals, arrival) = AsyncStream.makeStream()
    }

    var callCount: Int { state.withLock { $0.callCount } }
    var running: Int { state.withLock { $0.running } }
    var maximumRunning: Int { state.withLock { $0.maximumRunning } }

    /// Calls that ended because their task was cancelled (as AsyncHTTPClient's `execute` does).
    var cancelled: [Int] { state.withLock { $0.cancelled } }

    nonisolated(nonsending) func execute(_ request: BackendRequest, context: RequestContext) async -> Result<BackendResponse, BackendFailure> {
        let id = state.withLock { state in
            state.callCount += 1
            return state.callCount
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let alreadyCancelled = state.withLock { state in
                    if state.cancelled.contains(id) { return true }
                    state.running += 1
                    state.maximumRunning = max(state.maximumRunning, state.running)
                    state.waiting[id] = continuation
                    return false
                }
                if alreadyCancelled {
                    continuation.resume(returning: .failure(.transport("cancelled")))
                } else {
                    arrival.yield(Call(id: id, device: String(context.deviceID.dropFirst(3)), request: request))
                }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                state.cancelled.append(id)
                guard let continuation = state.waiting.removeValue(forKey: id) else {
                    return nil as CheckedContinuation<Result<BackendResponse, BackendFailure>, Never>?
                }
                state.running -= 1
                return continuation
            }
            continuation?.resume(returning: .failure(.transport("cancelled")))
        }
    }

    /// The next call the fleet made (waits for it).
    func nextCall() async -> Call {
        var iterator = arrivals.makeAsyncIterator()
        return await iterator.next()!
    }

    func answer(_ call: Call, _ result: Result<BackendResponse, BackendFailure>) {
        let continuation = state.withLock { state in
            let continuation = state.waiting.removeValue(forKey: call.id)
            if continuation != nil { state.running -= 1 }
            return continuation
        }
        continuation?.resume(returning: result)
    }
}

/// Records steps and hands them to the test one by one.
final class StepStream: FleetSink {
    private let steps = Mutex<[DeviceStep]>([])
    private let stream: AsyncStream<DeviceStep>
    private let continuation: AsyncStream<DeviceStep>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func record(_ step: DeviceStep) {
        steps.withLock { $0.append(step) }
        continuation.yield(step)
    }

    var recorded: [DeviceStep] { steps.withLock { $0 } }

    /// The next step recorded that matches `predicate` (waits for it).
    func nextStep(where predicate: (DeviceStep) -> Bool = { _ in true }) async -> DeviceStep {
        var iterator = stream.makeAsyncIterator()
        while let step = await iterator.next() {
            if predicate(step) { return step }
        }
        fatalError("the step stream never ends")
    }
}

extension Logger {
    static var quiet: Logger {
        var logger = Logger(label: "scheduler-tests")
        logger.logLevel = .critical
        return logger
    }
}

/// Timer slack: timers fire up to the slack after their deadline, so those due close together share a wake.
@Suite struct TimerSlackTests {
    typealias TestFleet = Fleet

    @Test func aTimerFiresTheSlackAfterItsDeadlineAndItsPollRecordsBoth() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, timerSlack: .seconds(2), logger: .quiet)
        try await withRunningFleet(fleet) {
            try await fleet.add(SchedulerTests.resumed("stb-1", clock: clock, seed: 7))
            let deadline = try #require(await fleet.nextTimerDeadline)
            #expect(await fleet.wakeDeadline == deadline.advanced(by: .seconds(2)))
            clock.advance(to: deadline.advanced(by: .seconds(2)))
            let call = await backend.nextCall()
            backend.answer(call, .success(.profile(nil)))
            let poll = try #require(await sink.nextStep { !$0.polls.isEmpty }.polls.first)
            #expect(poll.plannedEpochMs == clock.epochMilliseconds(at: deadline))
            #expect(poll.sentEpochMs == poll.plannedEpochMs + 2_000)
        }
    }

    @Test func timersDueWithinTheSlackOfTheEarliestShareItsWake() async throws {
        let clock = ManualClock()
        let backend = GatedBackend()
        let sink = StepStream()
        // First polls are spread over one interval (600 s), so every later one is due within the slack of the first.
        let fleet = TestFleet(clock: clock, timers: .clockSleeps, executor: backend, sink: sink, timerSlack: .seconds(600), logger: .quiet)
        try await withRunningFleet(fleet) {
            let names = (1...4).map { "stb-\($0)" }
            for (index, name) in names.enumerated() {
                try await fleet.add(SchedulerTests.resumed(name, clock: clock, seed: UInt64(60 + index), interval: .seconds(600)))
            }
            let earliest = try #require(await fleet.nextTimerDeadline)
            #expect(await fleet.wakeDeadline == earliest.advanced(by: .seconds(600)))
            clock.advance(to: earliest.advanced(by: .seconds(600)))
            var sent: Set<Int64> = []
            var devices: Set<String> = []
            for _ in names {
                let call = await backend.nextCall()
                backend.answer(call, .success(.profile(nil)))
                let poll = try #require(await sink.nextStep { $0.device == call.device && !$0.polls.isEmpty }.polls.first)
                sent.insert(poll.sentEpochMs)
                devices.insert(call.device)
            }
            #expect(devices == Set(names))
            // One wake: every poll was sent at the same instant.
            #expect(sent == [clock.epochMilliseconds(at: earliest.advanced(by: .seconds(600)))])
        }
    }
}
