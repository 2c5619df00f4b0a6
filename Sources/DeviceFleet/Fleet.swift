import AccessEnablerAPI
import DequeModule
import Logging
import RegcodeEngine
import ServiceLifecycle

/// Drives many device engines in one process, as a swift-service-lifecycle `Service`.
///
/// One heap holds every device's timers and one sleeping child task waits for the earliest of
/// them, so an idle device costs a few hundred bytes and no thread. Backend calls run as child
/// tasks of ``run()``, at most `maxConcurrentRequests` at a time; the rest wait in a FIFO (their
/// lateness shows in the poll log, which is the point of recording it). Work asked for before
/// `run()` starts waits for it.
public actor Fleet<C: DeviceClock>: Service {
    /// Where a `cycle` device is in its loop.
    enum CycleState {
        case loggingIn
        case holding(until: C.Instant)
        case loggingOut
    }

    struct Member {
        var engine: DeviceEngine<C>
        let scenario: Scenario
        let incarnation: UInt64
        let cycle: CyclePlan
        var cycleState = CycleState.loggingIn
    }

    /// An engine timer, or the scenario's own (the app's part of a `cycle` device).
    enum TimerKind: Hashable {
        case engine(DeviceTimer)
        case scenario
    }

    struct TimerKey: Hashable {
        var device: String
        var kind: TimerKind
    }

    struct PendingCall: Sendable {
        var device: String
        var incarnation: UInt64
        var id: RequestID
        var request: BackendRequest
        var context: RequestContext
    }

    /// What the actor asks of `run()`: child tasks to start.
    enum Work: Sendable {
        case call(PendingCall)
        /// Sleep until `deadline`, then fire due timers (`id` tells a superseded sleep apart).
        case sleep(id: UInt64, until: C.Instant)
    }

    let clock: C
    let executor: any BackendExecutor
    let sink: any FleetSink
    let logger: Logger
    let maxConcurrentRequests: Int
    /// AccessEnabler calls a device may have waiting (queued for `setRequestor` or behind its
    /// request in flight) before ``send(_:to:)`` refuses more with ``FleetError/busy(device:pending:)``.
    let maxPendingPerDevice: Int

    var members: [String: Member] = [:]
    var incarnations: UInt64 = 0
    var timers = TimerQueue<C.Instant, TimerKey>()
    /// The sleep `run()` was last asked for.
    var sleeper: (id: UInt64, deadline: C.Instant)?
    var sleeperIDs: UInt64 = 0
    var waitingCalls = Deque<PendingCall>()
    var activeCalls = 0
    var stopping = false
    /// Set while the fleet takes no new work (see ``hold(reason:)``).
    var held: Hold?
    /// Totals over every hold so far.
    public internal(set) var holdTotals = HoldTotals()
    var drained: [CheckedContinuation<Void, Never>] = []
    var stoppingWaiters: [CheckedContinuation<Void, Never>] = []
    let work: AsyncStream<Work>
    let workContinuation: AsyncStream<Work>.Continuation

    public init(
        clock: C,
        executor: any BackendExecutor,
        sink: any FleetSink,
        maxConcurrentRequests: Int = 256,
        maxPendingPerDevice: Int = 256,
        logger: Logger
    ) {
        self.clock = clock
        self.executor = executor
        self.sink = sink
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.maxPendingPerDevice = max(1, maxPendingPerDevice)
        self.logger = logger
        (work, workContinuation) = AsyncStream.makeStream()
    }

    // MARK: Membership

    /// Adds a device, resumes its stored state and starts its scenario.
    public func add(_ spec: DeviceSpec) throws(FleetError) {
        guard !stopping else { throw .stopped }
        let name = spec.settings.name
        guard members[name] == nil else { throw .duplicateDevice(name) }
        incarnations += 1
        let engine = DeviceEngine(settings: spec.settings, deviceID: spec.deviceID, snapshot: spec.snapshot, clock: clock, seed: spec.seed)
        members[name] = Member(engine: engine, scenario: spec.scenario, incarnation: incarnations, cycle: spec.cycle ?? CyclePlan())
        let resumingCode = spec.snapshot.code != nil
        if let actions = members[name]?.engine.resume() { process(name, actions) }
        for command in spec.scenario.startCommands(resumingCode: resumingCode) {
            apply(command, to: name)
        }
        logger.debug("device added", metadata: ["device": "\(name)", "scenario": "\(spec.scenario.rawValue)"])
    }

    /// Removes a device: its timers stop and answers still in flight are dropped.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        guard var member = members.removeValue(forKey: name) else { return false }
        _ = member.engine.shutdown()
        for timer in DeviceTimer.allCases { timers.cancel(TimerKey(device: name, kind: .engine(timer))) }
        timers.cancel(TimerKey(device: name, kind: .scenario))
        if var hold = held {
            hold.deferred = hold.deferred.filter { $0.key.device != name }
            held = hold
        }
        waitingCalls.removeAll { $0.device == name }
        logger.debug("device removed", metadata: ["device": "\(name)"])
        return true
    }

    /// Applies an AccessEnabler call to a device.
    public func send(_ command: DeviceCommand, to device: String) throws(FleetError) {
        guard !stopping else { throw .stopped }
        guard members[device] != nil else { throw .unknownDevice(device) }
        if let held { throw .held(held.reason) }
        if let pending = members[device]?.engine.pendingWork, pending >= maxPendingPerDevice {
            throw .busy(device: device, pending: pending)
        }
        apply(command, to: device)
    }

    public func snapshot(of device: String) -> DeviceSnapshot? {
        members[device]?.engine.snapshot
    }

    /// Calls and operations a device has waiting (see ``DeviceEngine/pendingWork``).
    public func pendingWork(of device: String) -> Int? {
        members[device]?.engine.pendingWork
    }

    public func settings(of device: String) -> DeviceSettings? {
        members[device]?.engine.settings
    }

    public var deviceNames: [String] { members.keys.sorted() }

    /// How many devices are in each phase (one actor hop for the whole fleet).
    public func phaseCounts() -> [DevicePhase: Int] {
        var counts: [DevicePhase: Int] = [:]
        for member in members.values { counts[member.engine.phase, default: 0] += 1 }
        return counts
    }

    public var count: Int { members.count }

    /// Backend calls running or waiting for a slot.
    public var requestsOutstanding: Int { activeCalls + waitingCalls.count }

    // MARK: Service

    /// Runs the timer sleeps and backend calls as child tasks until the fleet stops (graceful
    /// shutdown or ``stop()``). Calls in flight when it stops still answer and their steps are
    /// recorded; cancelling the task that runs it cancels them instead.
    public func run() async throws {
        await withDiscardingTaskGroup { calls in
            await withDiscardingTaskGroup { sleepers in
                sleepers.addTask {
                    // Cancelled (not a shutdown) when the fleet stopped for another reason.
                    guard (try? await gracefulShutdown()) != nil else { return }
                    await self.stop()
                }
                for await item in work {
                    switch item {
                    case .call(let call):
                        calls.addTask { await self.perform(call) }
                    case .sleep(let id, let deadline):
                        sleepers.addTask { await self.sleep(id, until: deadline) }
                    }
                }
                // Stopped, or the task running us was cancelled (which ends the stream and reaches
                // the calls in flight): no new work from here on; pending sleeps and the shutdown
                // watch end now; calls are awaited.
                self.beginStopping()
                sleepers.cancelAll()
            }
        }
    }

    /// Stops timers and new work; returns once every backend call in flight has answered.
    public func stop() async {
        beginStopping()
        if activeCalls > 0 {
            await withCheckedContinuation { drained.append($0) }
        }
    }

    /// Stops timers and new work at once (idempotent).
    private func beginStopping() {
        guard !stopping else { return }
        stopping = true
        sleeper = nil
        timers = TimerQueue()
        for name in members.keys {
            _ = members[name]?.engine.shutdown()
        }
        waitingCalls.removeAll()
        workContinuation.finish()
        let waiters = stoppingWaiters
        stoppingWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the fleet has begun stopping (tests wait on it instead of polling `stopping`).
    func untilStopping() async {
        guard !stopping else { return }
        await withCheckedContinuation { stoppingWaiters.append($0) }
    }

    // MARK: Engine plumbing

    func apply(_ command: DeviceCommand, to name: String) {
        guard let actions = members[name]?.engine.handle(command) else { return }
        process(name, actions)
    }

    func process(_ name: String, _ actions: [DeviceAction<C.Instant>]) {
        guard let member = members[name] else { return }
        var step = DeviceStep(device: name, snapshot: nil, endedCodes: [], polls: [], events: [], epochMs: clock.epochMillisecondsNow)
        var reactions: [DeviceCommand] = []
        for action in actions {
            switch action {
            case .send(let id, let request, let context):
                enqueueCall(PendingCall(device: name, incarnation: member.incarnation, id: id, request: request, context: context))
            case .schedule(let timer, let deadline):
                schedule(TimerKey(device: name, kind: .engine(timer)), at: deadline)
            case .cancel(let timer):
                timers.cancel(TimerKey(device: name, kind: .engine(timer)))
                held?.deferred[TimerKey(device: name, kind: .engine(timer))] = nil
            case .emit(let event):
                step.events.append(event)
                reactions += member.scenario.reaction(to: event, settings: member.engine.settings)
                if member.scenario == .cycle { reactions += cycleReaction(to: event, device: name) }
            case .persist(let snapshot):
                step.snapshot = snapshot
            case .recordPoll(let attempt):
                step.polls.append(attempt)
            case .recordRequest(let attempt):
                step.requests.append(attempt)
            case .endCode(let ending):
                step.endedCodes.append(ending)
            }
        }
        if !step.isEmpty { sink.record(step) }
        for command in reactions where !stopping {
            apply(command, to: name)
        }
    }
}
