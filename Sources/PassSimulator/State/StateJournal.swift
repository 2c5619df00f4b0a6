import GRDB
import Logging
import Synchronization

/// The single, ordered path from state changes to the state file.
///
/// ``SimulatorState`` reports each change synchronously under ``SharedSimulatorState``'s lock, so changes queue in the
/// order they happened. One drain at a time writes everything queued so far in one transaction, oldest first; a request
/// waits in ``waitUntilDurable()`` until every change queued before it answered is committed.
final class StateJournal: Sendable {
    private struct Waiter {
        let sequence: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Locked {
        var pending: [StateChange] = []
        /// Sequence number of the last change queued.
        var queued: UInt64 = 0
        /// Sequence number of the last change committed.
        var committed: UInt64 = 0
        var draining = false
        var file: StateFile?
        var waiters: [Waiter] = []
    }

    private let locked = Mutex(Locked())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Queues one change; written as soon as the state file is open.
    func record(_ change: StateChange) {
        let start = self.locked.withLock { locked -> Bool in
            locked.pending.append(change)
            locked.queued += 1
            return self.claimDrain(&locked)
        }
        if start { self.startDrain() }
    }

    /// Starts writing to `file`, beginning with whatever was queued before it was open.
    func attach(_ file: StateFile) {
        let start = self.locked.withLock { locked -> Bool in
            locked.file = file
            return self.claimDrain(&locked)
        }
        if start { self.startDrain() }
    }

    /// Returns once every change queued so far is committed to the state file; throws when writing failed.
    func waitUntilDurable() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let done = self.locked.withLock { locked -> Bool in
                if locked.committed >= locked.queued { return true }
                locked.waiters.append(Waiter(sequence: locked.queued, continuation: continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func claimDrain(_ locked: inout Locked) -> Bool {
        guard !locked.draining, locked.file != nil, !locked.pending.isEmpty else { return false }
        locked.draining = true
        return true
    }

    private func startDrain() {
        Task { await self.drain() }
    }

    /// Writes batches until nothing is pending. Only one drain runs at a time (``claimDrain(_:)``), which keeps the
    /// file's writes in queue order.
    private func drain() async {
        while true {
            let next = self.locked.withLock { locked -> (StateFile, [StateChange], UInt64)? in
                guard let file = locked.file, !locked.pending.isEmpty else {
                    locked.draining = false
                    return nil
                }
                let batch = locked.pending
                locked.pending.removeAll(keepingCapacity: true)
                return (file, batch, locked.queued)
            }
            guard let (file, batch, last) = next else { return }
            do {
                try await file.apply(batch)
                let ready = self.locked.withLock { locked -> [Waiter] in
                    locked.committed = last
                    let ready = locked.waiters.filter { $0.sequence <= last }
                    locked.waiters.removeAll { $0.sequence <= last }
                    return ready
                }
                for waiter in ready { waiter.continuation.resume() }
            } catch {
                // The batch goes back in front, to be retried with the next change; everybody waiting is told, since
                // nothing after the batch can be committed before it.
                let failed = self.locked.withLock { locked -> [Waiter] in
                    locked.pending.insert(contentsOf: batch, at: 0)
                    locked.draining = false
                    let failed = locked.waiters
                    locked.waiters.removeAll()
                    return failed
                }
                self.logger.error(
                    "state file write failed",
                    metadata: ["sim.state.changes": .stringConvertible(batch.count), "error": .string(String(describing: error))]
                )
                for waiter in failed { waiter.continuation.resume(throwing: error) }
                return
            }
        }
    }
}
