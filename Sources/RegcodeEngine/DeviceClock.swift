import Foundation
import RegcodeSupport

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
        // One rounding at the end: two (wall clock, then the offset) could put two instants read in order
        // up to 1.5 ms out of order each.
        let offset = base.now.duration(to: instant).components
        let offsetMs = Double(offset.seconds) * 1000 + Double(offset.attoseconds) / 1e15
        return Int64((Date().timeIntervalSince1970 * 1000 + offsetMs).rounded())
    }
}
