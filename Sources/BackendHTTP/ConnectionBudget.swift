import Synchronization

/// How many connections the pools that share it may hold open together: the process's share of its descriptors.
///
/// Running out of descriptors is not an error a Swift process on Linux survives: libdispatch's worker monitor opens
/// `/proc/<tid>/stat` about once a second and crashes the process when that open fails ("workq: registered worker
/// exited prematurely"). A connection beyond the budget is refused as a failed connect instead
/// (``KeepAliveHTTPError/connectionBudgetExhausted(limit:)``), so its device backs off and retries while the process
/// keeps the descriptors its database, sockets and runtime need.
package final class ConnectionBudget: Sendable {
    /// Connections that may be open (or being opened) at once.
    package let limit: Int
    private let open = Atomic<Int>(0)

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Connections counted now.
    package var openConnections: Int { open.load(ordering: .relaxed) }

    /// Counts one more connection; false (and nothing counted) when the budget is spent.
    func acquire() -> Bool {
        if open.add(1, ordering: .relaxed).newValue <= limit { return true }
        open.subtract(1, ordering: .relaxed)
        return false
    }

    /// A connection counted by ``acquire()`` closed, or was never made.
    func release() {
        open.subtract(1, ordering: .relaxed)
    }
}
