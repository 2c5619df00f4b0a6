import ControlRPC
import DeviceFleet
import Foundation
import HeapModule
import Logging
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import Synchronization

/// Where the pipeline stores steps: the database, or in tests a store that fails on demand.
package protocol StepStore: Sendable {
    /// Stores `steps` in one transaction and returns their events with sequence numbers; on a
    /// throw nothing of the batch is stored.
    func apply(_ steps: [DeviceStep]) async throws -> [StoredEvent]
}

extension RegcodeStore: StepStore {}

/// Takes the fleet's steps, stores them in batches (one transaction each) and only then
/// publishes the stored events, so a subscriber never sees an event the database lacks.
///
/// `record` only appends to a buffer: the fleet never waits for SQLite. The writer drains the
/// buffer whenever it is non-empty, so batches grow with load and stay small when idle.
///
/// A batch that cannot be stored (database locked, disk full, I/O error) is never dropped: it goes
/// back to the front of the buffer and is written again after a backoff, so the sequence stays
/// gap-free and in order. ``health`` reports the trouble; once the buffer reaches
/// ``Limits/holdAt`` the pipeline asks for the work to stop (see ``StorageHealth/holding``) and,
/// after storage recovers and the buffer is back under ``Limits/releaseAt``, to resume.
package final class EventPipeline<C: Clock<Duration>>: FleetSink, Service {
    /// Bounds of the in-memory buffer and the retry schedule.
    package struct Limits: Sendable {
        /// Steps buffered at which new work is held.
        package var holdAt = 50_000
        /// Steps buffered under which held work is released again (once writes succeed).
        package var releaseAt = 25_000
        /// First retry delay after a failed write; doubles up to ``maxRetryDelay``.
        package var firstRetryDelay: Duration = .milliseconds(100)
        package var maxRetryDelay: Duration = .seconds(5)
        /// How long a stopping daemon keeps retrying a failing write before it gives up.
        package var shutdownGrace: Duration = .seconds(60)
        /// After a write, how long steps gather before the next one (group commit). Every commit writes each
        /// page it touched to the log whole, so at thousands of polls a second, batches of one or two steps
        /// cost several log pages per poll; a couple of milliseconds makes them tens of steps. Zero: none.
        /// Only batches without events gather, and only while no event waits: an event's subscribers are
        /// waiting for it (the fan-out target is 5 ms at p99), a poll that changed nothing has no one waiting.
        package var gather: Duration = .milliseconds(2)

        /// The daemon's bounds.
        package static var standard: Limits { Limits() }
    }

    private struct State {
        var buffer: [DeviceStep] = []
        /// Steps of the batch being written (back in `buffer` if the write fails).
        var writing = 0
        /// Whether a step in `buffer` carries events.
        var eventsBuffered = false
        var closed = false
        var health = StorageHealth()
        /// Steps recorded since the start, and how many of them are stored: step `n` is stored once `committed >= n`
        /// (batches are written in order, and a failed one goes back to the front).
        var submitted: UInt64 = 0
        var committed: UInt64 = 0
        /// Each device's last recorded step, while it may not be stored yet.
        var lastStep: [String: UInt64] = [:]
        /// Callers of ``flushed(device:)`` and ``whenStored(device:_:)`` waiting for a step to be stored, the lowest
        /// target first: every backend call waits here for its own record, so at 90,000 devices nearly all of them
        /// wait at once, and a commit must release its few without reading every other one.
        var barriers = Heap<Barrier>()
        /// Set when ``run()`` has returned: what is still buffered will never be stored.
        var finished = false
    }

    private struct Barrier: Comparable {
        var target: UInt64
        var resume: @Sendable () -> Void

        static func < (lhs: Barrier, rhs: Barrier) -> Bool { lhs.target < rhs.target }
        static func == (lhs: Barrier, rhs: Barrier) -> Bool { lhs.target == rhs.target }
    }

    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let store: any StepStore
    private let broadcaster: EventBroadcaster<EventNotification>
    private let observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void]
    private let limits: Limits
    private let clock: C
    private let logger: Logger
    /// Every change of ``health``, newest wins (a watcher only needs the current state).
    package let healthChanges: AsyncStream<StorageHealth>
    private let healthContinuation: AsyncStream<StorageHealth>.Continuation

    package init(
        store: any StepStore,
        broadcaster: EventBroadcaster<EventNotification>,
        observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void],
        limits: Limits = .standard,
        clock: C,
        logger: Logger
    ) {
        self.store = store
        self.broadcaster = broadcaster
        self.observers = observers
        self.limits = limits
        self.clock = clock
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (healthChanges, healthContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    package func record(_ step: DeviceStep) {
        let (accepted, changed) = state.withLock { state -> (Bool, StorageHealth?) in
            guard !state.closed else { return (false, nil) }
            state.buffer.append(step)
            state.submitted += 1
            state.lastStep[step.device] = state.submitted
            if !step.events.isEmpty { state.eventsBuffered = true }
            return (true, Self.updateHolding(&state, limits: limits))
        }
        if let changed { healthContinuation.yield(changed) }
        if accepted {
            wake.yield()
        } else {
            logger.error("step recorded after the pipeline closed; not stored", metadata: ["device": "\(step.device)"])
        }
    }

    package func run() async throws {
        await withGracefulShutdownHandler {
            for await _ in wakeups {
                let storedEvents = await flush(until: nil)
                // Events are waited for (subscribers, the fan-out target): only batches of plain polls gather.
                if limits.gather > .zero, !storedEvents, !state.withLock(\.eventsBuffered) {
                    // A shutdown ends the gathering at once: what is left is written below.
                    try? await cancelWhenGracefulShutdown { [clock, limits] in try await clock.sleep(for: limits.gather) }
                }
            }
        } onGracefulShutdown: {
            self.wake.finish()
        }
        // Whatever the fleet produced while stopping is stored before the daemon exits.
        state.withLock { $0.closed = true }
        await flush(until: clock.now.advanced(by: limits.shutdownGrace))
        healthContinuation.finish()
        // Nothing more will be stored: no one waits for it.
        let waiting = state.withLock { state -> [Barrier] in
            state.finished = true
            defer { state.barriers = Heap() }
            return Array(state.barriers.unordered)
        }
        for barrier in waiting { barrier.resume() }
    }

    /// Returns once every step `device` recorded before this call is stored (at once when none waits): a device's
    /// fleet entry and store row change only after its queued steps land, so none of them overwrites the new record.
    /// Steps of other devices recorded later do not delay it; a batch holding one of its steps does. Returns too when
    /// the pipeline has stopped (those steps will never be stored).
    package func flushed(device: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let parked = state.withLock { state -> Bool in
                guard let target = state.lastStep[device], target > state.committed, !state.finished else {
                    state.lastStep[device] = nil
                    return false
                }
                state.barriers.insert(Barrier(target: target, resume: { continuation.resume() }))
                return true
            }
            if !parked { continuation.resume() }
        }
    }

    /// The fleet's wait before a device's next backend call (see ``FleetSink/whenStored(device:_:)``): whether steps
    /// `device` recorded are not stored yet; if so, `stored` runs once they are, or once the pipeline has stopped.
    /// Steps of other devices do not delay it.
    package func whenStored(device: String, _ stored: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard let target = state.lastStep[device], target > state.committed, !state.finished else {
                state.lastStep[device] = nil
                return false
            }
            state.barriers.insert(Barrier(target: target, resume: stored))
            return true
        }
    }

    /// Callers of ``flushed(device:)`` waiting now.
    package var waitingBarriers: Int { state.withLock { $0.barriers.count } }

    /// Steps not yet stored (buffered, or in the batch being written).
    package var backlog: Int { state.withLock { $0.buffer.count + $0.writing } }

    /// Whether writes succeed, and whether new work is held.
    package var health: StorageHealth { state.withLock { $0.health } }

    /// Writes everything buffered so far, retrying failed batches with backoff; with a
    /// `deadline`, gives up at it (the daemon is stopping) and says how much was not stored.
    /// - Returns: Whether any stored batch carried events.
    @discardableResult
    package func flush(until deadline: C.Instant?) async -> Bool {
        var delay = limits.firstRetryDelay
        var storedEvents = false
        while true {
            let steps = state.withLock { state -> [DeviceStep] in
                defer {
                    state.buffer.removeAll(keepingCapacity: true)
                    state.eventsBuffered = false
                }
                state.writing = state.buffer.count
                return state.buffer
            }
            guard !steps.isEmpty else { return storedEvents }
            do {
                let stored = try await store.apply(steps)
                if !stored.isEmpty {
                    // Encoded once here for every subscriber. With none, there is no one to miss them: a
                    // subscriber registering after this check reads this batch in its replay.
                    if broadcaster.subscriberCount > 0 {
                        broadcaster.publish(stored.map { EventNotification(params: EventEncoding.params($0)) })
                    }
                    storedEvents = true
                }
                for observer in observers { observer(steps, stored) }
                self.stored(steps.count)
                delay = limits.firstRetryDelay
            } catch {
                // Back in front of whatever arrived meanwhile: order and the gap-free sequence hold.
                let backlog = state.withLock { state -> Int in
                    state.buffer.insert(contentsOf: steps, at: 0)
                    state.eventsBuffered = state.eventsBuffered || steps.contains { !$0.events.isEmpty }
                    state.writing = 0
                    return state.buffer.count
                }
                failed(error, backlog: backlog, retryIn: delay)
                // Cancelled, the store refuses every write and the clock every wait: retrying would spin until the
                // deadline (or for ever on a clock that does not move). What is left is said, as at the deadline.
                if Task.isCancelled || (deadline.map { clock.now >= $0 } ?? false) {
                    logger.critical(
                        "stopping with device steps that could not be stored",
                        metadata: ["steps": "\(backlog)", "error": "\(error)"]
                    )
                    return storedEvents
                }
                try? await clock.sleep(for: delay)
                delay = min(delay * 2, limits.maxRetryDelay)
            }
        }
    }

    private func failed(_ error: any Error, backlog: Int, retryIn delay: Duration) {
        let (changed, first) = state.withLock { state -> (StorageHealth?, Bool) in
            let before = state.health
            let first = before.failure == nil
            state.health.failure = StorageHealth.Failure(
                error: "\(error)",
                since: before.failure?.since ?? Date(),
                attempts: (before.failure?.attempts ?? 0) + 1
            )
            state.health.failedWrites += 1
            _ = Self.updateHolding(&state, limits: limits)
            return (state.health, first)
        }
        if first {
            logger.error(
                "could not store device steps; keeping them and retrying",
                metadata: ["steps": "\(backlog)", "error": "\(error)", "retry_in": "\(delay)"]
            )
        } else {
            logger.warning(
                "storing device steps failed again",
                metadata: ["steps": "\(backlog)", "error": "\(error)", "attempts": "\(changed?.failure?.attempts ?? 0)"]
            )
        }
        if let changed { healthContinuation.yield(changed) }
    }

    private func stored(_ count: Int) {
        let (changed, recovered, released) = state.withLock { state -> (StorageHealth?, StorageHealth.Failure?, [Barrier]) in
            let recovered = state.health.failure
            state.health.failure = nil
            state.writing = 0
            state.committed += UInt64(count)
            var released: [Barrier] = []
            while let lowest = state.barriers.min, lowest.target <= state.committed {
                released.append(state.barriers.removeMin())
            }
            let holdingChanged = Self.updateHolding(&state, limits: limits)
            return (recovered != nil ? state.health : holdingChanged, recovered, released)
        }
        for barrier in released { barrier.resume() }
        if let recovered {
            logger.notice(
                "device steps stored again",
                metadata: ["steps": "\(count)", "failed_attempts": "\(recovered.attempts)", "since": "\(recovered.since)"]
            )
        }
        if let changed { healthContinuation.yield(changed) }
    }

    /// Sets `holding` from the buffer's size and the failure; returns the health when it changed.
    private static func updateHolding(_ state: inout State, limits: Limits) -> StorageHealth? {
        let backlog = state.buffer.count + state.writing
        state.health.backlog = backlog
        let holding: Bool
        if state.health.holding {
            holding = state.health.failure != nil || backlog >= limits.releaseAt
        } else {
            holding = backlog >= limits.holdAt
        }
        guard holding != state.health.holding else { return nil }
        state.health.holding = holding
        if holding { state.health.holds += 1 }
        return state.health
    }
}
