import HeapModule

/// One min-heap of deadlines for every timer of every device in the fleet.
///
/// Cancelled or re-armed timers are not removed from the heap (that would be O(n)); each entry
/// carries the generation it was armed with and stale ones are skipped when they surface.
struct TimerQueue<Instant: InstantProtocol, Key: Hashable> {
    private struct Entry: Comparable {
        var deadline: Instant
        var sequence: UInt64
        var key: Key
        var generation: UInt64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.deadline == rhs.deadline ? lhs.sequence < rhs.sequence : lhs.deadline < rhs.deadline
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.deadline == rhs.deadline && lhs.sequence == rhs.sequence
        }
    }

    private var heap = Heap<Entry>()
    private var armed: [Key: UInt64] = [:]
    private var sequence: UInt64 = 0

    /// Arms `key` for `deadline`, replacing any earlier arming of the same key.
    mutating func schedule(_ key: Key, at deadline: Instant) {
        sequence += 1
        armed[key] = sequence
        heap.insert(Entry(deadline: deadline, sequence: sequence, key: key, generation: sequence))
    }

    mutating func cancel(_ key: Key) {
        armed[key] = nil
    }

    /// The earliest live deadline, dropping stale entries on the way.
    mutating func nextDeadline() -> Instant? {
        while let top = heap.min {
            if armed[top.key] == top.generation { return top.deadline }
            heap.removeMin()
        }
        return nil
    }

    /// Removes and returns every live timer whose deadline is at or before `now`, in deadline order.
    mutating func popDue(now: Instant) -> [Key] {
        var due: [Key] = []
        while let top = heap.min, top.deadline <= now {
            heap.removeMin()
            if armed[top.key] == top.generation {
                armed[top.key] = nil
                due.append(top.key)
            }
        }
        return due
    }

    var armedCount: Int { armed.count }

    /// Room for `additional` more armed timers without growing the heap or the table on the way.
    mutating func reserveCapacity(forAdditional additional: Int) {
        heap.reserveCapacity(heap.count + additional)
        armed.reserveCapacity(armed.count + additional)
    }
}
