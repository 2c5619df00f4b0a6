import Foundation
import Synchronization

/// The clock a device engine reads. Monotonic instants drive timers; `epochMilliseconds(at:)`
/// maps an instant to wall-clock time, because the backend speaks in epoch milliseconds
/// (code expiry, token expiry) while waits must survive wall-clock jumps.
public protocol DeviceClock: Clock, Sendable where Duration == Swift.Duration, Instant: Sendable {
    /// Milliseconds since the Unix epoch at `instant`.
    func epochMilliseconds(at instant: Instant) -> Int64
}

extension DeviceClock {
    /// Milliseconds since the Unix epoch now.
    public var epochMillisecondsNow: Int64 { epochMilliseconds(at: now) }

    /// The instant at which wall-clock time reaches `epochMs` (as seen from now).
    public func instant(forEpochMilliseconds epochMs: Int64) -> Instant {
        now.advanced(by: .milliseconds(epochMs - epochMillisecondsNow))
    }
}

/// The production clock: `ContinuousClock` for waits, the system wall clock for epoch times.
public struct SystemDeviceClock: DeviceClock {
    public typealias Instant = ContinuousClock.Instant
    private let base = ContinuousClock()

    public init() {}

    public var now: Instant { base.now }
    public var minimumResolution: Swift.Duration { base.minimumResolution }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }

    public func epochMilliseconds(at instant: Instant) -> Int64 {
        let wallNow = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return wallNow + (instant - base.now).milliseconds
    }
}

/// A clock that only moves when told to: the engine's tests and simulations run on it.
public final class ManualClock: DeviceClock {
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// Offset from the clock's origin.
        public var offset: Swift.Duration
        public init(offset: Swift.Duration) { self.offset = offset }
        public func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "t+\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    private let originEpochMs: Int64

    /// - Parameter originEpochMs: the wall-clock time of the origin instant.
    public init(originEpochMs: Int64 = 1_763_720_000_000) {
        self.originEpochMs = originEpochMs
    }

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Swift.Duration { .nanoseconds(1) }

    public func epochMilliseconds(at instant: Instant) -> Int64 {
        originEpochMs + instant.offset.milliseconds
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    public func advance(by duration: Swift.Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time to `instant` (never backwards) and wakes due sleepers.
    public func advance(to instant: Instant) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            if instant > state.now { state.now = instant }
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for key in ready.keys { state.sleepers[key] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}

extension Swift.Duration {
    /// Whole milliseconds, truncated toward zero.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Seconds as a floating-point value.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
