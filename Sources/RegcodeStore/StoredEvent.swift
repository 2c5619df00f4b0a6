import RegcodeEngine
import RegcodeSupport

/// A callback as stored: the gap-free sequence number is assigned by the database.
public struct StoredEvent: Sendable, Equatable {
    public var seq: Int64
    public var device: String
    /// The app of the device that fired it (``DeviceStep/defaultApp`` on a plain device).
    public var app: String
    /// Milliseconds since the Unix epoch.
    public var time: Int64
    public var name: String
    public var args: [String: JSONValue]

    public init(seq: Int64, device: String, app: String = DeviceStep.defaultApp, time: Int64, name: String, args: [String: JSONValue]) {
        self.seq = seq
        self.device = device
        self.app = app
        self.time = time
        self.name = name
        self.args = args
    }
}
