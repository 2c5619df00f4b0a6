import ControlSocket
import Synchronization

/// The event streams being served, so graceful shutdown can end them: each ends like a server cut-off, with a
/// `cutoff` event the client resumes from, and the listener then stops without waiting for clients to leave.
final class OpenStreams: Sendable {
    private struct State {
        var subscriptions: [UInt64: Subscription] = [:]
        var nextToken: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// Registers a stream; nil once shutdown has begun (the subscription is then cancelled).
    func open(_ subscription: Subscription) -> UInt64? {
        let token = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            defer { state.nextToken += 1 }
            state.subscriptions[state.nextToken] = subscription
            return state.nextToken
        }
        if token == nil { subscription.cancel() }
        return token
    }

    func close(_ token: UInt64) {
        _ = state.withLock { $0.subscriptions.removeValue(forKey: token) }
    }

    /// Ends every open stream and refuses new ones.
    func closeAll() {
        let open = state.withLock { state -> [Subscription] in
            state.closed = true
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        for subscription in open { subscription.finish() }
    }
}
