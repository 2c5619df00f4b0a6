import ControlRPC
import RegcodeSupport
import Synchronization

/// A handler with a few methods and an event log, to drive the HTTP transport without a daemon.
final class FakeControlHandler: ControlHandler, Sendable {
    /// Events encoded once where they are published, as the daemon's are.
    let broadcaster: EventBroadcaster<EventNotification>
    private let state = Mutex<(calls: [String], stored: [JSONValue], peers: [ControlPeer])>(([], [], []))
    /// Tests waiting for a call to be recorded (no polling: a busy machine must not make a test give up early).
    private let waiters = Mutex<[(name: String, continuation: CheckedContinuation<Void, Never>)]>([])

    init(bufferSize: Int = 64) {
        self.broadcaster = EventBroadcaster(bufferSize: bufferSize)
    }

    var calls: [String] { state.withLock { $0.calls } }

    /// Returns once `name` has been recorded as a call.
    func waitForCall(_ name: String) async {
        await withCheckedContinuation { continuation in
            let done = waiters.withLock { waiters in
                // Checked under the waiters' lock: `record` appends, then resumes under it.
                if calls.contains(name) { return true }
                waiters.append((name, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func record(_ name: String) {
        state.withLock { $0.calls.append(name) }
        let ready = waiters.withLock { waiters in
            let ready = waiters.filter { $0.name == name }.map(\.continuation)
            waiters.removeAll { $0.name == name }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
    var peers: [ControlPeer] { state.withLock { $0.peers } }

    /// Stores then publishes an event, as the daemon does; `padding` characters of arguments make it that much larger.
    func emit(device: String, name: String, padding: Int = 0) {
        let args: JSONValue = padding > 0 ? ["padding": .string(String(repeating: "x", count: padding))] : [:]
        let event = state.withLock { state -> JSONValue in
            let event: JSONValue = ["seq": .int(Int64(state.stored.count + 1)), "device": .string(device), "name": .string(name), "args": args]
            state.stored.append(event)
            return event
        }
        broadcaster.publish(EventNotification(params: event))
    }

    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
        state.withLock { $0.peers.append(peer) }
        record(method)
        switch method {
        case "echo": return params ?? .null
        case "fail": throw .unknownDevice("nope")
        default: throw .methodNotFound(method)
        }
    }

    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        let since = params?["since"]?.intValue
        let devices = params?["devices"]?.arrayValue?.compactMap(\.stringValue)
        let live = broadcaster.subscribe { event in
            guard let devices, let device = event.params["device"]?.stringValue else { return true }
            return devices.contains(device)
        }
        // Recorded once the live part is registered: events emitted from then on reach it.
        record("subscribe")
        guard let since else { return Subscription(result: ["subscribed": true], live: live) }
        let stored = state.withLock { $0.stored }.filter { event in
            (event["seq"]?.intValue ?? 0) > since && (devices.map { $0.contains(event["device"]?.stringValue ?? "") } ?? true)
        }
        let replay = Replay(events: stored) { [self] in self.record("replayed") }
        return Subscription(result: ["subscribed": true], live: live, replay: replay, since: since)
    }

    /// Stored events for a replay; says when the stream has taken the last one.
    struct Replay: AsyncSequence, Sendable {
        typealias Failure = Never
        typealias Element = EventNotification
        let events: [JSONValue]
        let done: @Sendable () -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            typealias Failure = Never
            var rest: ArraySlice<JSONValue>
            let done: @Sendable () -> Void
            mutating func next() async -> EventNotification? {
                guard let event = rest.popFirst() else {
                    done()
                    return nil
                }
                return EventNotification(unencoded: event)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: events[...], done: done) }
    }
}
