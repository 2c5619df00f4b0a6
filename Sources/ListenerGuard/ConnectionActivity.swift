import Synchronization

/// What keeps a quiet connection legitimately open: a subscription it reads events from, or a call still being
/// answered. The connection's task holds and releases; its ``ReadDeadlineHandler`` does not idle it out meanwhile.
package final class ConnectionActivity: Sendable {
    private let holds = Atomic<Int>(0)

    package init() {}

    package func hold() {
        self.holds.add(1, ordering: .relaxed)
    }

    package func release() {
        self.holds.subtract(1, ordering: .relaxed)
    }

    var isHeld: Bool { self.holds.load(ordering: .relaxed) > 0 }
}
