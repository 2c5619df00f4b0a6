import RegcodeEngine
import RegcodeSupport
import Synchronization

/// A clock that only moves when told to: the engine's tests and simulations run on it.
package final class ManualClock: DeviceClock, Clock {
    package typealias Instant = DeviceInstant

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        /// Sleeps cancelled before they were registered (the cancel handler ran first).
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    private let originEpochMs: Int64

    /// - Parameter originEpochMs: the wall-clock time of the origin instant.
    package init(originEpochMs: Int64 = 1_763_720_000_000) {
        self.originEpochMs = originEpochMs
    }

    package var now: Instant { state.withLock { $0.now } }
    /// Sleeps waiting for time to move.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }
    package var minimumResolution: Swift.Duration { .nanoseconds(1) }

    package func epochMilliseconds(at instant: Instant) -> Int64 {
        originEpochMs + instant.offset.milliseconds
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    package func advance(by duration: Swift.Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time to `instant` (never backwards) and wakes due sleepers.
    package func advance(to instant: Instant) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            if instant > state.now { state.now = instant }
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for key in ready.keys { state.sleepers[key] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    package func sleep(until deadline: Instant) async throws {
        try await sleep(until: deadline, tolerance: nil)
    }

    package func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            // The handler may run before the sleeper is registered: leave a mark so it never waits.
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        _ = state.withLock { $0.cancelled.remove(id) }
        try Task.checkCancellation()
    }
}
