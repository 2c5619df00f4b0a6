import ControlRPC
import RegcodeSupport

/// The daemon itself: its status, the event stream, and this surface described.
extension ControlMethods {
    static let daemon: [ControlMethod] = [
        ControlMethod(
            "daemon.status",
            "Version, uptime, devices by state, storage health, the activation URL, the shard (K/N or null).",
            result: "{version, pid, uptimeSeconds, devices, states, lastSeq, storage, activationUrl, starting, shard, ...}",
            answeredWhileStarting: true
        ) { handler, _ throws(RPCError) in try await handler.status() },
        ControlMethod(
            "subscribe",
            "Streams events (socket only; over HTTP use GET /events): stored ones after since, then live ones.",
            parameters: [
                ControlParameter("devices", .strings, "Only these devices."),
                ControlParameter("events", .strings, "Only these event names."),
                ControlParameter("since", .integer, "Replay stored events after this sequence number first."),
            ],
            result: "{subscribed, lastSeq, since}; then event notifications",
            answeredWhileStarting: true,
            handler: .subscription { handler, params throws(RPCError) in try await handler.subscription(params) }
        ),
        ControlMethod("rpc.discover", "This API as an OpenRPC document.", result: "an OpenRPC 1.2.6 document", answeredWhileStarting: true) {
            _,
            _ in
            table.openRPC(version: RegcodedVersion.current)
        },
    ]
}
