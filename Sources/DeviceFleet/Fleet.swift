import AccessEnablerAPI
import DequeModule
import Logging
import RegcodeEngine
import ServiceLifecycle

/// Why a fleet operation was refused.
public enum FleetError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownDevice(String)
    case duplicateDevice(String)
    case stopped

    public var description: String {
        switch self {
        case .unknownDevice(let name): "unknown device '\(name)'"
        case .duplicateDevice(let name): "a device named '\(name)' already exists"
        case .stopped: "the fleet is stopping"
        }
    }
}

/// Drives many device engines in one process.
///
/// One heap holds every device's timers and one sleeping task waits for the earliest of them, so
/// an idle device costs a few hundred bytes and no thread. Backend calls run as tasks, at most
/// `maxConcurrentRequests` at a time; the rest wait in a FIFO (their lateness shows in the poll
/// log, which is the point of recording it).
public actor Fleet<C: DeviceClock>: Service {
    /// A device to add: its settings, stable id, stored state and scenario.
    public struct DeviceSpec: Sendable {
        public var settings: DeviceSettings
        public var deviceID: String
        public var snapshot: DeviceSnapshot
        public var scenario: Scenario
        public var seed: UInt64
        /// Timing of the `cycle` scenario (defaults when nil).
        public var cycle: CyclePlan?

        public init(
            settings: DeviceSettings,
            deviceID: String,
            snapshot: DeviceSnapshot = DeviceSnapshot(),
            scenario: Scenario = .login,
            seed: UInt64,
            cycle: CyclePlan? = nil
        ) {
            self.settings = settings
            self.deviceID = deviceID
            self.snapshot = snapshot
            self.scenario = scenario
            self.seed = seed
            self.cycle = cycle
        }
    }

    /// Where a `cycle` device is in its loop.
    private enum CycleState {
        case loggingIn
        case holding(until: C.Instant)
        case loggingOut
    }

    private struct Member {
        var engine: DeviceEngine<C>
        let scenario: Scenario
        let incarnation: UInt64
        let cycle: CyclePlan
        var cycleState = CycleState.loggingIn
    }

    /// An engine timer, or the scenario's own (the app's part of a `cycle` device).
    private enum TimerKind: Hashable {
        case engine(DeviceTimer)
        case scenario
    }

    private struct TimerKey: Hashable {
        var device: String
        var kind: TimerKind

        init(device: String, timer: DeviceTimer) {
            self.device = device
            self.kind = .engine(timer)
        }

        init(scenarioOf device: String) {
            self.device = device
            self.kind = .scenario
        }
    }

    private struct PendingSend {
        var device: String
        var incarnation: UInt64
        var id: RequestID
        var request: BackendRequest
        var context: RequestContext
    }

    private let clock: C
    private let executor: any BackendExecutor
    private let sink: any FleetSink
    private let logger: Logger
    private let maxConcurrentRequests: Int

    private var members: [String: Member] = [:]
    private var incarnations: UInt64 = 0
    private var timers = TimerQueue<C.Instant, TimerKey>()
    private var sleeper: (id: UInt64, deadline: C.Instant, task: Task<Void, Never>)?
    private var sleeperIDs: UInt64 = 0
    private var waitingSends = Deque<PendingSend>()
    private var activeSends = 0
    private var stopping = false
    private var drained: [CheckedContinuation<Void, Never>] = []

    public init(clock: C, executor: any BackendExecutor, sink: any FleetSink, maxConcurrentRequests: Int = 256, logger: Logger) {
        self.clock = clock
        self.executor = executor
        self.sink = sink
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.logger = logger
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
        for timer in DeviceTimer.allCases { timers.cancel(TimerKey(device: name, timer: timer)) }
        timers.cancel(TimerKey(scenarioOf: name))
        waitingSends.removeAll { $0.device == name }
        logger.debug("device removed", metadata: ["device": "\(name)"])
        return true
    }

    /// Applies an AccessEnabler call to a device.
    public func send(_ command: DeviceCommand, to device: String) throws(FleetError) {
        guard !stopping else { throw .stopped }
        guard members[device] != nil else { throw .unknownDevice(device) }
        apply(command, to: device)
    }

    public func snapshot(of device: String) -> DeviceSnapshot? {
        members[device]?.engine.snapshot
    }

    public func settings(of device: String) -> DeviceSettings? {
        members[device]?.engine.settings
    }

    public var deviceNames: [String] { members.keys.sorted() }

    /// How many devices are in each phase (one actor hop for the whole fleet).
    public func phaseCounts() -> [DevicePhase: Int] {
        var counts: [DevicePhase: Int] = [:]
        for member in members.values { counts[member.engine.snapshot.phase, default: 0] += 1 }
        return counts
    }

    public var count: Int { members.count }

    /// Backend calls running or waiting for a slot.
    public var requestsOutstanding: Int { activeSends + waitingSends.count }

    // MARK: Service

    /// Runs until graceful shutdown, then stops every loop and waits for calls in flight.
    public func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }

    /// Stops timers and new work; returns once every backend call in flight has answered.
    public func stop() async {
        stopping = true
        sleeper?.task.cancel()
        sleeper = nil
        for name in members.keys {
            _ = members[name]?.engine.shutdown()
        }
        waitingSends.removeAll()
        if activeSends > 0 {
            await withCheckedContinuation { drained.append($0) }
        }
    }

    // MARK: Engine plumbing

    private func apply(_ command: DeviceCommand, to name: String) {
        guard let actions = members[name]?.engine.handle(command) else { return }
        process(name, actions)
    }

    private func process(_ name: String, _ actions: [DeviceAction<C.Instant>]) {
        guard let member = members[name] else { return }
        var step = DeviceStep(device: name, snapshot: nil, endedCodes: [], polls: [], events: [], epochMs: clock.epochMillisecondsNow)
        var reactions: [DeviceCommand] = []
        for action in actions {
            switch action {
            case .send(let id, let request, let context):
                enqueueSend(PendingSend(device: name, incarnation: member.incarnation, id: id, request: request, context: context))
            case .schedule(let timer, let deadline):
                timers.schedule(TimerKey(device: name, timer: timer), at: deadline)
                armSleeper(for: deadline)
            case .cancel(let timer):
                timers.cancel(TimerKey(device: name, timer: timer))
            case .emit(let event):
                step.events.append(event)
                reactions += member.scenario.reaction(to: event, settings: member.engine.settings)
                if member.scenario == .cycle { reactions += cycleReaction(to: event, device: name) }
            case .persist(let snapshot):
                step.snapshot = snapshot
            case .recordPoll(let attempt):
                step.polls.append(attempt)
            case .endCode(let ending):
                step.endedCodes.append(ending)
            }
        }
        if !step.isEmpty { sink.record(step) }
        for command in reactions where !stopping {
            apply(command, to: name)
        }
    }

    // MARK: The cycle scenario

    /// Moves a `cycle` device along its loop when a callback says a step finished.
    private func cycleReaction(to event: DeviceEvent, device: String) -> [DeviceCommand] {
        guard var member = members[device], case .setAuthenticationStatus(let status, let errorCode) = event else { return [] }
        let authenticated = status == AccessEnabler.statusSuccess
        var commands: [DeviceCommand] = []
        switch member.cycleState {
        case .loggingIn where authenticated:
            let until = clock.now.advanced(by: member.cycle.hold)
            member.cycleState = .holding(until: until)
            scheduleCycleTick(device, at: min(clock.now.advanced(by: member.cycle.authorizeEvery), until))
        case .loggingIn where errorCode == .genericAuthentication:
            // The login ended without success (code expired, none obtainable): try again after a pause.
            // ("User Not Authenticated Error" is only checkAuthentication's answer before the login.)
            scheduleCycleTick(device, at: clock.now.advanced(by: member.cycle.authorizeEvery))
        case .loggingIn:
            break
        case .loggingOut where !authenticated:
            member.cycleState = .loggingIn
            commands = [.getAuthentication(mvpd: nil)]
        case .holding, .loggingOut:
            break
        }
        members[device] = member
        return commands
    }

    /// The `cycle` scenario's own timer: authorize while holding, log out when the hold ends.
    private func cycleTick(device: String) -> [DeviceCommand] {
        guard var member = members[device] else { return [] }
        switch member.cycleState {
        case .holding(let until) where clock.now < until:
            scheduleCycleTick(device, at: min(clock.now.advanced(by: member.cycle.authorizeEvery), until))
            return [.getAuthorization(resource: member.cycle.resource)]
        case .holding:
            member.cycleState = .loggingOut
            members[device] = member
            return [.logout]
        case .loggingIn:
            return [.getAuthentication(mvpd: nil)]
        case .loggingOut:
            return []
        }
    }

    private func scheduleCycleTick(_ device: String, at deadline: C.Instant) {
        timers.schedule(TimerKey(scenarioOf: device), at: deadline)
        armSleeper(for: deadline)
    }

    // MARK: Timers

    /// Makes sure a sleeper wakes no later than `deadline`.
    private func armSleeper(for deadline: C.Instant) {
        guard !stopping else { return }
        if let current = sleeper, current.deadline <= deadline { return }
        sleeper?.task.cancel()
        sleeperIDs += 1
        let id = sleeperIDs
        let clock = self.clock
        let task = Task { [weak self] in
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            await self?.timersDue(sleeper: id)
        }
        sleeper = (id, deadline, task)
    }

    private func timersDue(sleeper id: UInt64) {
        if sleeper?.id == id { sleeper = nil }
        guard !stopping else { return }
        for key in timers.popDue(now: clock.now) {
            switch key.kind {
            case .engine(let timer):
                guard let actions = members[key.device]?.engine.timerFired(timer) else { continue }
                process(key.device, actions)
            case .scenario:
                for command in cycleTick(device: key.device) where !stopping {
                    apply(command, to: key.device)
                }
            }
        }
        if let next = timers.nextDeadline() { armSleeper(for: next) }
    }

    // MARK: Backend calls

    private func enqueueSend(_ send: PendingSend) {
        if activeSends < maxConcurrentRequests {
            start(send)
        } else {
            waitingSends.append(send)
        }
    }

    private func start(_ send: PendingSend) {
        activeSends += 1
        let clock = self.clock
        let executor = self.executor
        Task {
            let sentAt = clock.now
            let result = await executor.execute(send.request, context: send.context)
            let timing = RequestTiming(sentAt: sentAt, latency: sentAt.duration(to: clock.now))
            self.deliver(send, result: result, timing: timing)
        }
    }

    private func deliver(_ send: PendingSend, result: Result<BackendResponse, BackendFailure>, timing: RequestTiming<C.Instant>) {
        activeSends -= 1
        if !stopping, let member = members[send.device], member.incarnation == send.incarnation,
            let actions = members[send.device]?.engine.handle(response: result, for: send.id, timing: timing)
        {
            process(send.device, actions)
        }
        while activeSends < maxConcurrentRequests, let next = waitingSends.popFirst() {
            start(next)
        }
        if activeSends == 0 && !drained.isEmpty {
            let waiters = drained
            drained = []
            for waiter in waiters { waiter.resume() }
        }
    }
}
