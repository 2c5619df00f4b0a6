import ControlRPC
import RegcodeSupport

/// `GET /events?since=N&device=a&device=b,c&events=status` as `subscribe` params, so the stream obeys exactly the
/// socket's rules (and its errors). `Last-Event-ID` (sent by a reconnecting `EventSource`) wins over `since`.
enum EventStreamQuery {
    static func params(query: [(key: Substring, value: Substring)], lastEventID: String?) throws(RPCError) -> JSONValue {
        var object: [String: JSONValue] = [:]
        var devices: [String] = []
        var events: [String] = []
        var since: String?
        for (key, value) in query {
            switch key {
            case "device", "devices":
                devices += Self.list(value)
            case "events", "event":
                events += Self.list(value)
            case "since":
                since = String(value)
            case "access_token":
                continue
            default:
                throw .invalidParams("unknown query parameter '\(key)'", data: ["allowed": ["since", "device", "events"]])
            }
        }
        if let lastEventID, !lastEventID.isEmpty { since = lastEventID }
        if let since {
            guard let value = Int64(since), value >= 0 else {
                throw .invalidParams("'since' (or Last-Event-ID) must be a sequence number ≥ 0, not '\(since)'", data: ["member": "since"])
            }
            object["since"] = .int(value)
        }
        if !devices.isEmpty { object["devices"] = .array(devices.map(JSONValue.string)) }
        if !events.isEmpty { object["events"] = .array(events.map(JSONValue.string)) }
        return .object(object)
    }

    private static func list(_ value: Substring) -> [String] {
        value.split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
    }
}
