import RegcodeEngine
import RegcodeSupport

/// A callback as stored: the gap-free sequence number is assigned by the database.
package struct StoredEvent: Sendable, Equatable {
    package var seq: Int64
    package var device: String
    /// The app of the device that fired it (``DeviceStep/defaultApp`` on a plain device).
    package var app: String
    /// Milliseconds since the Unix epoch.
    package var time: Int64
    package var name: String
    package var args: [String: JSONValue]

    package init(seq: Int64, device: String, app: String = DeviceStep.defaultApp, time: Int64, name: String, args: [String: JSONValue]) {
        self.seq = seq
        self.device = device
        self.app = app
        self.time = time
        self.name = name
        self.args = args
    }
}
