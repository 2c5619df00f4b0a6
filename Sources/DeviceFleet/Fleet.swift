import AccessEnablerAPI
import DequeModule
import Logging
import NIOCore
import NIOPosix
import RegcodeEngine
import ServiceLifecycle
import Synchronization

/// Numbers of the requests' stored records (``RequestInFlight/id``), one sequence for every fleet of the process.
private let requestRecordNumbers = Atomic<UInt64>(0)

/// Drives many device engines in one process, as a swift-service-lifecycle `Service`.
///
/// One heap holds every device's timers and one wait covers the earliest of them (a timer of the
/// fleet's event loop for the system clock, a sleeping child task for any other clock), so an idle
/// device costs a few hundred bytes and no thread. The actor runs on one NIO event loop. Backend
/// calls run as child tasks of ``run()``, at most `maxConcurrentRequests` at a time; the rest wait
/// in a FIFO (their lateness shows in the poll log, which is the point of recording it). Work asked
/// for before `run()` starts waits for it.
package actor Fleet: Service {
    /// Where a `cycle` device is in its loop.
    enum CycleState {
        case loggingIn
        case holding(until: DeviceInstant)
        case loggingOut
    }

    /// One AccessEnabler instance: an app of the device.
    struct AppSlot {
        let id: String
        var machine: AppMachine
    }

    struct Member {
        /// The device's apps; the first is the one the scenario drives and calls without `app` reach.
        var apps: [AppSlot]
        /// Shared token storage across the apps; nil for a device with one plain app (no overhead).
        var sso: SSOHost?
        /// The device's TV Provider (Apple single sign-on); nil when not emulated.
        var tvProvider: TVProviderDevice?
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
        /// Index of the app on the device.
        var app: Int = 0
        var kind: TimerKind
    }

    struct PendingCall: Sendable {
        var device: String
        var app: Int
        var incarnation: UInt64
        var id: RequestID
        var request: BackendRequest
        var context: RequestContext
        /// The ``RequestInFlight/id`` of the call's stored record.
        var recordID: UInt64
    }

    /// What the actor asks of `run()`: child tasks to start.
    enum Work: Sendable {
        case call(PendingCall)
        /// Sleep until `deadline`, then fire due timers (`id` tells a superseded sleep apart).
        case sleep(id: UInt64, until: DeviceInstant)
    }

    let clock: any DeviceClock
    /// How the fleet waits for its earliest timer (see ``FleetTimers``).
    let timerWaits: FleetTimers
    /// The loop the actor runs on (see ``init(clock:executor:sink:eventLoop:maxConcurrentRequests:maxPendingPerDevice:timerSlack:logger:)``).
    package nonisolated let eventLoop: any EventLoop
    let executor: any BackendExecutor
    let sink: any FleetSink
    let logger: Logger
    let maxConcurrentRequests: Int
    /// AccessEnabler calls a device may have waiting (queued for `setRequestor` or behind its
    /// request in flight) before ``send(_:to:app:)`` refuses more with ``FleetError/busy(device:pending:)``; the calls
    /// that release a device's queue are never refused (``DeviceEngine/refuses(_:bound:)``).
    let maxPendingPerDevice: Int
    /// How long after its deadline a timer may fire, so timers due close together fire in one wake.
    let timerSlack: Duration
    /// Whether each call's ``RegcodeEngine/RequestInFlight`` is stored before it goes out.
    let writeAhead: WriteAhead

    var members: [String: Member] = [:]
    var incarnations: UInt64 = 0
    var timers = TimerQueue<TimerKey>()
    /// The sleep `run()` was last asked for.
    var sleeper: (id: UInt64, deadline: DeviceInstant)?
    var sleeperIDs: UInt64 = 0
    /// The event-loop timer behind `sleeper` (system clock only, while `run()` runs).
    var loopTimer: Scheduled<Void>?
    var loopTimersRunning = false
    var waitingCalls = Deque<PendingCall>()
    var activeCalls = 0
    /// Calls waiting for their device's earlier steps to be stored (see `enqueueCall`).
    var callsAwaitingStorage = 0
    var stopping = false
    /// Set while the fleet takes no new work (see ``hold(reason:)``).
    var held: Hold?
    /// Totals over every hold so far.
    package internal(set) var holdTotals = HoldTotals()
    var drained: [CheckedContinuation<Void, Never>] = []
    var stoppingWaiters: [CheckedContinuation<Void, Never>] = []
    let work: AsyncStream<Work>
    let workContinuation: AsyncStream<Work>.Continuation

    /// - Parameters:
    ///   - eventLoop: The NIO event loop the actor runs on. Give the backend's connections the same loop: an
    ///     answer then reaches its device, and the device's next request its connection, without waking
    ///     another thread (wake-ups were the largest cost of a poll, see Benchmarks/README.md).
    ///   - timerSlack: How long after its deadline a timer may fire. Timers due within the slack of
    ///     the earliest fire together in one wake-up, as the kernel's timer slack does; every poll still
    ///     records its planned and sent time, so the lateness this adds stays visible. Zero: exact timers.
    package init(
        clock: any DeviceClock,
        timers: FleetTimers = .eventLoop,
        executor: any BackendExecutor,
        sink: any FleetSink,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
        maxConcurrentRequests: Int = 256,
        maxPendingPerDevice: Int = 256,
        timerSlack: Duration = .zero,
        writeAhead: WriteAhead = .requests,
        logger: Logger
    ) {
        self.clock = clock
        self.timerWaits = timers
        self.writeAhead = writeAhead
        self.eventLoop = eventLoop
        self.executor = executor
        self.sink = sink
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.maxPendingPerDevice = max(1, maxPendingPerDevice)
        self.timerSlack = max(.zero, timerSlack)
        self.logger = logger
        (work, workContinuation) = AsyncStream.makeStream()
    }

    /// The actor's executor: its event loop.
    package nonisolated var unownedExecutor: UnownedSerialExecutor {
        eventLoop.executor.asUnownedSerialExecutor()
    }

    // MARK: Membership

    /// Adds a device, resumes its stored state and starts its scenario.
    package func add(_ spec: DeviceSpec) throws(FleetError) {
        guard !stopping else { throw .stopped }
        let name = spec.settings.name
        guard members[name] == nil else { throw .duplicateDevice(name) }
        incarnations += 1
        members[name] = Member(
            apps: makeApps(spec),
            sso: spec.makeSSOHost(),
            tvProvider: spec.tvProvider,
            scenario: spec.scenario,
            incarnation: incarnations,
            cycle: spec.cycle ?? CyclePlan()
        )
        let resumingCode = spec.snapshot.code != nil
        pushTVProvider(to: name)
        for app in members[name]!.apps.indices {
            if let actions = members[name]?.apps[app].machine.resume() { process(name, app: app, actions) }
        }
        for command in spec.scenario.startCommands(resumingCode: resumingCode, rules: spec.settings.persona.rules) {
            apply(command, to: name)
        }
        logger.debug("device added", metadata: ["device": "\(name)", "scenario": "\(spec.scenario.rawValue)"])
    }

    /// Adds devices in one call (one actor hop for a whole start-up), as ``add(_:)`` each, in order;
    /// stops at the first that cannot be added.
    package func add(contentsOf specs: [DeviceSpec]) throws(FleetError) {
        // Sized once: grown device by device, the tables were copied again and again (a 50,000-device start-up).
        members.reserveCapacity(members.count + specs.count)
        timers.reserveCapacity(forAdditional: specs.reduce(0) { $0 + $1.otherApps.count + 1 })
        for spec in specs { try add(spec) }
    }

    /// Removes a device: its timers stop and answers still in flight are dropped.
    @discardableResult
    package func remove(_ name: String) -> Bool {
        guard var member = members.removeValue(forKey: name) else { return false }
        for app in member.apps.indices {
            _ = member.apps[app].machine.shutdown()
            for timer in DeviceTimer.allCases { timers.cancel(TimerKey(device: name, app: app, kind: .engine(timer))) }
        }
        timers.cancel(TimerKey(device: name, kind: .scenario))
        if var hold = held {
            hold.deferred = hold.deferred.filter { $0.key.device != name }
            held = hold
        }
        waitingCalls.removeAll { $0.device == name }
        logger.debug("device removed", metadata: ["device": "\(name)"])
        return true
    }

    /// Applies an AccessEnabler call to one app of a device (`nil`: its first app). A call the device's bound on
    /// waiting work refuses (see ``DeviceEngine/refuses(_:bound:)``) throws ``FleetError/busy(device:pending:)`` and
    /// is reported on the device's event stream as `queue.callRefused`, so an app watching events sees it too.
    package func send(_ command: DeviceCommand, to device: String, app appID: String? = nil) throws(FleetError) {
        guard !stopping else { throw .stopped }
        let (app, waiting) = try appAndRefusal(of: command, appID, of: device)
        if let held { throw .held(held.reason) }
        if let waiting {
            process(device, app: app, [.emit(.callRefused(command.name, waiting: waiting, limit: maxPendingPerDevice))])
            throw .busy(device: device, pending: waiting)
        }
        apply(command, to: device, app: app)
    }

    /// The app's index, and the calls it has waiting when its bound refuses `command` (else nil). A function of its
    /// own so that no copy of the member outlives it: `apply` changes the engine next, and a live copy would make that
    /// change copy every engine of the device.
    private func appAndRefusal(
        of command: DeviceCommand,
        _ appID: String?,
        of device: String
    ) throws(FleetError) -> (app: Int, waiting: Int?) {
        guard let member = members[device] else { throw .unknownDevice(device) }
        let app = try appIndex(appID, of: member, device: device)
        let engine = member.apps[app].machine
        return (app, engine.refuses(command, bound: maxPendingPerDevice) ? engine.waitingCalls : nil)
    }

    func appIndex(_ appID: String?, of member: Member, device: String) throws(FleetError) -> Int {
        guard let appID else { return 0 }
        guard let index = member.apps.firstIndex(where: { $0.id == appID }) else { throw .unknownApp(device: device, app: appID) }
        return index
    }

    /// The durable state of a device's app (`nil`: its first app).
    package func snapshot(of device: String, app appID: String? = nil) -> DeviceSnapshot? {
        guard let member = members[device], let app = try? appIndex(appID, of: member, device: device) else { return nil }
        return member.apps[app].machine.snapshot
    }

    /// Calls and operations a device's first app has waiting (see ``DeviceEngine/pendingWork``).
    package func pendingWork(of device: String) -> Int? {
        members[device]?.apps[0].machine.pendingWork
    }

    package func settings(of device: String) -> DeviceSettings? {
        members[device]?.apps[0].machine.settings
    }

    package var deviceNames: [String] { members.keys.sorted() }

    /// How many devices are in each phase (one actor hop for the whole fleet).
    package func phaseCounts() -> [DevicePhase: Int] {
        var counts: [DevicePhase: Int] = [:]
        forEachPhase { _, phase in counts[phase, default: 0] += 1 }
        return counts
    }

    /// Devices by state, grouped by a key of the caller's (the daemon groups by fleet): one pass, one actor hop.
    package func phaseCounts<Key: Hashable & Sendable>(groupedBy key: (String) -> Key) -> [Key: [DevicePhase: Int]] {
        var counts: [Key: [DevicePhase: Int]] = [:]
        forEachPhase { name, phase in counts[key(name), default: [:]][phase, default: 0] += 1 }
        return counts
    }

    /// Each device's name and the state of its first app. Each member is reached in place (`inout`): iterating
    /// `members` copies the whole member (its apps, TV Provider and plans) to read one field.
    private func forEachPhase(_ body: (String, DevicePhase) -> Void) {
        var index = members.startIndex
        while index != members.endIndex {
            body(members.keys[index], Self.firstAppPhase(&members.values[index]))
            index = members.index(after: index)
        }
    }

    private static func firstAppPhase(_ member: inout Member) -> DevicePhase {
        member.apps[0].machine.phase
    }

    package var count: Int { members.count }

    /// Backend calls running or waiting for a slot (or for their device's earlier steps to be stored).
    package var requestsOutstanding: Int { activeCalls + waitingCalls.count + callsAwaitingStorage }

    /// Backend calls waiting because `maxConcurrentRequests` are in flight (not because the fleet is held).
    package var callsWaitingForSlot: Int { activeCalls >= maxConcurrentRequests ? waitingCalls.count : 0 }

    // MARK: Service

    /// Runs the timer sleeps and backend calls as child tasks until the fleet stops (graceful
    /// shutdown or ``stop()``). Calls in flight when it stops still answer and their steps are
    /// recorded; cancelling the task that runs it cancels them instead.
    package func run() async throws {
        setLoopTimersRunning(true)
        defer { setLoopTimersRunning(false) }
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
    package func stop() async {
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
        setLoopTimersRunning(false)
        timers = TimerQueue()
        for name in members.keys {
            for app in members[name]!.apps.indices { _ = members[name]?.apps[app].machine.shutdown() }
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

    func apply(_ command: DeviceCommand, to name: String, app: Int = 0) {
        guard members[name] != nil else { return }
        var actions: [DeviceAction] = []
        if members[name]?.sso != nil {
            actions += storageBefore(command, device: name, app: app)
        }
        guard let handled = members[name]?.apps[app].machine.handle(command) else { return }
        process(name, app: app, actions + handled)
    }

    /// - Parameter answered: The ``RequestInFlight/id`` of the request whose answer the actions react to: the step removes
    ///   its record.
    func process(_ name: String, app: Int = 0, _ actions: [DeviceAction], answered: UInt64? = nil) {
        // Only what the loop reads is taken from the member, in place: a copy of the member (or of its app)
        // would share the apps' storage, and the next change to an engine (a reaction below) would then copy
        // every engine of the device; copying an engine is dozens of retains.
        guard let index = members.index(forKey: name) else { return }
        let incarnation = members.values[index].incarnation
        let appID = members.values[index].apps[app].id
        let scenario = members.values[index].scenario
        let hasSSO = members.values[index].sso != nil
        let pickerAnswer = members.values[index].tvProvider?.pickerAnswer
        var step = DeviceStep(device: name, app: appID, isFirstApp: app == 0, epochMs: clock.epochMillisecondsNow)
        step.answeredRequest = answered
        var reactions: [DeviceCommand] = []
        var pick: TVProviderChoice?
        var calls: [PendingCall] = []
        var recordID: UInt64 = 0
        for action in actions {
            switch action {
            case .send(let id, let request, let context):
                calls.append(
                    PendingCall(device: name, app: app, incarnation: incarnation, id: id, request: request, context: context, recordID: recordID)
                )
            case .recordSent(var request):
                guard writeAhead == .requests else { continue }
                recordID = requestRecordNumbers.add(1, ordering: .relaxed).newValue
                request.id = recordID
                step.sentRequest = request
            case .schedule(let timer, let deadline):
                schedule(TimerKey(device: name, app: app, kind: .engine(timer)), at: deadline)
            case .cancel(let timer):
                timers.cancel(TimerKey(device: name, app: app, kind: .engine(timer)))
                held?.deferred[TimerKey(device: name, app: app, kind: .engine(timer))] = nil
            case .emit(let event):
                step.events.append(event)
                if case .presentTvProviderDialog(let picker) = event, let answer = pickerAnswer {
                    let offered = picker["providers"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                    pick = answer.choice(offering: offered)
                }
                // The scenario drives the first app; other apps are driven by their callers.
                guard app == 0 else { continue }
                if let settings = members[name]?.apps[app].machine.settings {
                    reactions += scenario.reaction(to: event, settings: settings)
                }
                if scenario == .cycle { reactions += cycleReaction(to: event, device: name) }
            case .persist(let snapshot):
                step.snapshot = snapshot
            case .recordPoll(let attempt):
                step.polls.append(attempt)
            case .recordRequest(let attempt):
                step.requests.append(attempt)
            case .endCode(let ending):
                step.endedCodes.append(ending)
            case .storeTokens(let tokens):
                step.tokens = tokens
            }
        }
        if let snapshot = step.snapshot, hasSSO, let tokens = storageAfter(snapshot, device: name, app: app) {
            step.tokens = tokens
        }
        if !step.isEmpty { sink.record(step) }
        // After the step that led to them, which holds the call's `RequestInFlight`, is recorded: a call waits for it
        // to be stored (see `enqueueCall`).
        for call in calls { enqueueCall(call) }
        for command in reactions where !stopping {
            apply(command, to: name, app: app)
        }
        if let pick, !stopping {
            try? selectTVProvider(pick, device: name, app: appID)
        }
    }
}
