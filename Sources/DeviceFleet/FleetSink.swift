import RegcodeEngine

/// Where the fleet hands its steps: the daemon stores them (events get their sequence numbers
/// there) and only then delivers the events. Called on the fleet's executor, so it must not block.
package protocol FleetSink: Sendable {
    func record(_ step: DeviceStep)

    /// Whether steps `device` recorded are not stored yet; if so, `stored` runs once they are (or once the sink
    /// stops storing), on any thread. The fleet sends a device's next backend call only after this, so a
    /// registration, a code or a poll's answer is stored before any call that follows it goes out.
    func whenStored(device: String, _ stored: @escaping @Sendable () -> Void) -> Bool
}

extension FleetSink {
    /// A sink that keeps nothing back: every step counts as stored once recorded.
    package func whenStored(device: String, _ stored: @escaping @Sendable () -> Void) -> Bool { false }
}
