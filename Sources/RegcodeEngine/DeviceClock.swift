import Foundation
import RegcodeSupport

/// The one instant type of the engine and the fleet: time since a clock's origin. A value type of one `Duration`, so
/// timers compare and heap without generics, and a test's manual clock and the system clock hand out the same type.
package struct DeviceInstant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
    /// Time since the clock's origin.
    package var offset: Duration

    package init(offset: Duration) { self.offset = offset }

    package func advanced(by duration: Duration) -> DeviceInstant { DeviceInstant(offset: offset + duration) }
    package func duration(to other: DeviceInstant) -> Duration { other.offset - offset }
    package static func < (lhs: DeviceInstant, rhs: DeviceInstant) -> Bool { lhs.offset < rhs.offset }
    package var description: String { "t+\(offset)" }
}

/// The clock a device engine reads. Monotonic instants drive timers; `epochMilliseconds(at:)`
/// maps an instant to wall-clock time, because the backend speaks in epoch milliseconds
/// (code expiry, token expiry) while waits must survive wall-clock jumps.
///
/// Not generic: one instant type, so the engine, the fleet and the registry are one concrete type each, whatever
/// clock drives them (how a fleet waits for its timers is chosen when it is made, ``FleetTimers``).
package protocol DeviceClock: Sendable {
    /// The instant now.
    var now: DeviceInstant { get }
    /// Milliseconds since the Unix epoch at `instant`.
    func epochMilliseconds(at instant: DeviceInstant) -> Int64
    /// Waits until the clock reaches `deadline` (or the task is cancelled).
    func sleep(until deadline: DeviceInstant) async throws
}

extension DeviceClock {
    /// Milliseconds since the Unix epoch now.
    package var epochMillisecondsNow: Int64 { epochMilliseconds(at: now) }

    /// The instant at which wall-clock time reaches `epochMs` (as seen from now).
    package func instant(forEpochMilliseconds epochMs: Int64) -> DeviceInstant {
        now.advanced(by: .milliseconds(epochMs - epochMillisecondsNow))
    }
}

extension DeviceClock where Self == SystemDeviceClock {
    /// The system's clock (`clock: .system`).
    package static var system: SystemDeviceClock { SystemDeviceClock() }
}

/// The production clock: `ContinuousClock` for waits, the system wall clock for epoch times.
package struct SystemDeviceClock: DeviceClock {
    /// Every system clock shares one origin: instants read by two of them compare.
    private static let origin = ContinuousClock.now

    package init() {}

    package var now: DeviceInstant { DeviceInstant(offset: Self.origin.duration(to: .now)) }

    package func sleep(until deadline: DeviceInstant) async throws {
        try await ContinuousClock().sleep(until: Self.origin.advanced(by: deadline.offset), tolerance: nil)
    }

    package func epochMilliseconds(at instant: DeviceInstant) -> Int64 {
        // One rounding at the end: two (wall clock, then the offset) could put two instants read in order
        // up to 1.5 ms out of order each.
        let offset = now.duration(to: instant).components
        let offsetMs = Double(offset.seconds) * 1000 + Double(offset.attoseconds) / 1e15
        return Int64((Date().timeIntervalSince1970 * 1000 + offsetMs).rounded())
    }
}
