import RegcodeEngine

/// Where the fleet hands its steps: the daemon stores them (events get their sequence numbers
/// there) and only then delivers the events. Called on the fleet's executor, so it must not block.
public protocol FleetSink: Sendable {
    func record(_ step: DeviceStep)
}
