import ControlRPC
import RegcodeSupport

/// `subscribe`: stored events after `since`, then live ones, filtered by device and event name.
extension ControlMethodsHandler {
    func subscription(_ params: RPCParams) async throws(RPCError) -> Subscription {
        let devices = try params.optionalStrings("devices").map(Set.init)
        let names = try params.optionalStrings("events").map(Set.init)
        let since = try params.optionalInt("since")
        if let since, since < 0 { throw .invalidParams("'since' must not be negative") }
        // Register for live events first: the replay then covers everything before, and the
        // server drops live events the replay already sent (by seq).
        let live = context.status.broadcaster.subscribe { notification in
            let event = notification.params
            if let devices, let device = event["device"]?.stringValue, !devices.contains(device) { return false }
            if let names, let name = event["name"]?.stringValue, !names.contains(name) { return false }
            return true
        }
        let lastSeq = try await context.events.lastSequence()
        let result: JSONValue = ["subscribed": true, "lastSeq": .int(lastSeq), "since": since.map(JSONValue.int) ?? .null]
        guard let since else {
            return Subscription(result: result, live: live)
        }
        let replay = context.events.replay(after: since, devices: devices, names: names)
        return Subscription(result: result, live: live, replay: replay, since: since)
    }
}
