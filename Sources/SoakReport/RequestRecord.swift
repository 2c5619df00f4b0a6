import RegcodeRecords

/// One logged backend request other than a poll, as the report reads it: the engine's `RequestAttempt` and its device.
package typealias RequestRecord = RequestLogEntry

/// A device as the report reads it from the `devices` table: present devices appear in the report
/// even without any logged activity, and codes issued before the report's window still count.
package struct DeviceRecord: Sendable, Equatable {
    package var device: String
    /// The engine's `DevicePhase` raw value (`polling`, `authenticated`, `failed`, …).
    package var state: String?
    /// Codes the device was ever issued, as far as the state database remembers.
    package var codesIssued: Int
    /// `devices.fleet`: the configured fleet the device belongs to.
    package var fleet: String?

    package init(device: String, state: String?, codesIssued: Int, fleet: String? = nil) {
        self.device = device
        self.state = state
        self.codesIssued = codesIssued
        self.fleet = fleet
    }
}
