import Synchronization

/// One listener's connection cap and its counts: connections open now, accepted, refused over the cap, and closed
/// for idling or for sending a request too slowly.
///
/// Atomics: every accept and close on every event loop touches them.
package final class ListenerCounters: Sendable {
    /// What a status call or `/_sim/stats` reports for a listener.
    package struct Snapshot: Sendable, Hashable {
        /// The most connections held open at once.
        package var cap: Int
        package var open: Int
        package var accepted: Int
        /// Accepted past the cap and closed at once.
        package var refused: Int
        /// Closed for sending nothing, or a request or line too slowly.
        package var timedOut: Int

        package init(cap: Int, open: Int, accepted: Int, refused: Int, timedOut: Int) {
            self.cap = cap
            self.open = open
            self.accepted = accepted
            self.refused = refused
            self.timedOut = timedOut
        }
    }

    /// The listener's name in logs and metrics (`control`, `http`, `metrics`, `simulator`).
    package let name: String
    package let cap: Int
    private let openCount = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)
    private let timedOutCount = Atomic<Int>(0)

    package init(name: String, cap: Int) {
        self.name = name
        self.cap = max(1, cap)
    }

    /// Counts one more open connection; false (and it is counted as refused) when the cap is reached.
    func admit() -> Bool {
        if self.openCount.add(1, ordering: .relaxed).newValue <= self.cap {
            self.acceptedCount.add(1, ordering: .relaxed)
            return true
        }
        self.openCount.subtract(1, ordering: .relaxed)
        self.refusedCount.add(1, ordering: .relaxed)
        return false
    }

    /// A connection counted by ``admit()`` closed.
    func closed() {
        self.openCount.subtract(1, ordering: .relaxed)
    }

    /// A connection was closed by a read or idle timeout.
    func countTimeout() {
        self.timedOutCount.add(1, ordering: .relaxed)
    }

    package var snapshot: Snapshot {
        Snapshot(
            cap: self.cap,
            open: self.openCount.load(ordering: .relaxed),
            accepted: self.acceptedCount.load(ordering: .relaxed),
            refused: self.refusedCount.load(ordering: .relaxed),
            timedOut: self.timedOutCount.load(ordering: .relaxed)
        )
    }

    /// Zeroes the totals (open connections stay counted).
    package func resetTotals() {
        self.acceptedCount.store(0, ordering: .relaxed)
        self.refusedCount.store(0, ordering: .relaxed)
        self.timedOutCount.store(0, ordering: .relaxed)
    }
}
