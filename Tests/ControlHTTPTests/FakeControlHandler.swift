import ControlSocket
import RegcodeSupport
import Synchronization

/// A handler with a few methods and an event log, to drive the HTTP transport without a daemon.
final class FakeControlHandler: ControlHandler, Sendable {
    let broadcaster = EventBroadcaster<JSONValue>(bufferSize: 64)
    private let state = Mutex<(calls: [String], stored: [JSONValue], peers: [ControlPeer])>(([], [], []))

    var calls: [String] { state.withLock { $0.calls } }
    var peers: [ControlPeer] { state.withLock { $0.peers } }

    /// Stores then publishes an event, as the daemon does.
    func emit(device: String, name: String) {
        let event = state.withLock { state -> JSONValue in
            let event: JSONValue = ["seq": .int(Int64(state.stored.count + 1)), "device": .string(device), "name": .string(name), "args": [:]]
            state.stored.append(event)
            return event
        }
        broadcaster.publish(event)
    }

    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
        state.withLock {
            $0.calls.append(method)
            $0.peers.append(peer)
        }
        switch method {
        case "echo": return params ?? .null
        case "fail": throw .unknownDevice("nope")
        default: throw .methodNotFound(method)
        }
    }

    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        state.withLock { $0.calls.append("subscribe") }
        let since = params?["since"]?.intValue
        let devices = params?["devices"]?.arrayValue?.compactMap(\.stringValue)
        let live = broadcaster.subscribe { event in
            guard let devices, let device = event["device"]?.stringValue else { return true }
            return devices.contains(device)
        }
        guard let since else { return Subscription(result: ["subscribed": true], live: live) }
        let stored = state.withLock { $0.stored }.filter { event in
            (event["seq"]?.intValue ?? 0) > since && (devices.map { $0.contains(event["device"]?.stringValue ?? "") } ?? true)
        }
        let replay = AsyncStream<JSONValue> { continuation in
            for event in stored { continuation.yield(event) }
            continuation.finish()
        }
        return Subscription(result: ["subscribed": true], live: live, replay: replay, since: since)
    }
}
