import ControlRPC
import Synchronization

/// The event streams being served: at most ``limit`` at once, so streams cannot take the descriptors and the CPU the
/// fleet needs; and graceful shutdown ends them all, each like a server cut-off (a `cutoff` event the client resumes
/// from), so the listener stops without waiting for clients to leave.
package final class OpenStreams: Sendable {
    /// The most event streams served at once; a stream asked for beyond it is refused.
    package let limit: Int

    private struct State {
        /// Slots taken, by token; a slot's subscription is nil until it is subscribed.
        var slots: [UInt64: Subscription?] = [:]
        var nextToken: UInt64 = 0
        var refused = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// - Parameter limit: At least 1.
    package init(limit: Int) {
        precondition(limit >= 1, "at least one event stream")
        self.limit = limit
    }

    /// Streams open now (for `daemon.status` and metrics).
    package var openCount: Int { self.state.withLock { $0.slots.count } }

    /// Streams refused since start because ``limit`` were open (for `daemon.status` and metrics).
    package var refusedCount: Int { self.state.withLock { $0.refused } }

    /// Why ``reserve()`` gave no slot.
    enum Refusal: Error {
        /// ``limit`` streams are open; counted.
        case full
        /// Shutdown has begun.
        case closing
    }

    /// Takes a slot for a new stream, before anything is subscribed or read; the slot is freed when the returned
    /// ``Slot`` is released, however the response ends (or if it never starts).
    func reserve() throws(Refusal) -> Slot {
        let token = self.state.withLock { state -> Result<UInt64, Refusal> in
            guard !state.closed else { return .failure(.closing) }
            guard state.slots.count < self.limit else {
                state.refused += 1
                return .failure(.full)
            }
            defer { state.nextToken += 1 }
            state.slots[state.nextToken] = .some(nil)
            return .success(state.nextToken)
        }
        return Slot(streams: self, token: try token.get())
    }

    /// Ends every open stream and refuses new ones.
    func closeAll() {
        let open = self.state.withLock { state -> [Subscription] in
            state.closed = true
            return state.slots.values.compactMap { $0 }
        }
        for subscription in open { subscription.finish() }
    }

    /// Registers a slot's subscription for ``closeAll()``; false once shutdown has begun (the subscription is then
    /// cancelled).
    fileprivate func attach(_ subscription: Subscription, token: UInt64) -> Bool {
        let attached = self.state.withLock { state -> Bool in
            guard !state.closed, state.slots[token] != nil else { return false }
            state.slots[token] = subscription
            return true
        }
        if !attached { subscription.cancel() }
        return attached
    }

    fileprivate func release(_ token: UInt64) {
        _ = self.state.withLock { $0.slots.removeValue(forKey: token) }
    }

    /// One stream's place under the limit, held by its response; released with it.
    final class Slot: Sendable {
        private let streams: OpenStreams
        private let token: UInt64

        fileprivate init(streams: OpenStreams, token: UInt64) {
            self.streams = streams
            self.token = token
        }

        deinit {
            self.streams.release(self.token)
        }

        /// Frees the slot now rather than when the response is released; idempotent.
        func release() {
            self.streams.release(self.token)
        }

        /// See ``OpenStreams/attach(_:token:)``.
        func attach(_ subscription: Subscription) -> Bool {
            self.streams.attach(subscription, token: self.token)
        }
    }
}
