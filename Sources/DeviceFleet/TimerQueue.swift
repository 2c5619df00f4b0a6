import HeapModule

/// One min-heap of deadlines for every timer of every device in the fleet.
///
/// Cancelled or re-armed timers are not removed from the heap (that would be O(n)); each entry
/// carries the sequence number it was armed with and stale ones are skipped when they surface.
///
/// The heap holds a key's slot number, not the key: the heap compares and copies its elements at
/// every level it sifts through, and a key holding a device name made each copy a retain and a
/// release and each surfacing entry a hash of that name (~4 % of the daemon's CPU at 60,000
/// devices). A key keeps its slot while it is armed or has entries in the heap, and until it is
/// cancelled, so a timer re-armed after it fires (a poll) finds its slot in place.
struct TimerQueue<Instant: InstantProtocol, Key: Hashable> {
    private struct Entry: Comparable {
        var deadline: Instant
        var sequence: UInt64
        var slot: Int

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.deadline == rhs.deadline ? lhs.sequence < rhs.sequence : lhs.deadline < rhs.deadline
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.deadline == rhs.deadline && lhs.sequence == rhs.sequence
        }
    }

    private struct Slot {
        var key: Key
        /// The sequence number of the live arming; nil while not armed.
        var armed: UInt64?
        /// Heap entries that name this slot, live or stale.
        var entries = 0
        /// Whether the key was cancelled: its slot is freed once its last entry leaves the heap.
        var cancelled = false
    }

    private var heap = Heap<Entry>()
    private var slotOfKey: [Key: Int] = [:]
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var sequence: UInt64 = 0
    private(set) var armedCount = 0

    /// Arms `key` for `deadline`, replacing any earlier arming of the same key.
    mutating func schedule(_ key: Key, at deadline: Instant) {
        sequence += 1
        let slot = slotOfKey[key] ?? allocateSlot(for: key)
        if slots[slot].armed == nil { armedCount += 1 }
        slots[slot].armed = sequence
        slots[slot].entries += 1
        slots[slot].cancelled = false
        heap.insert(Entry(deadline: deadline, sequence: sequence, slot: slot))
    }

    mutating func cancel(_ key: Key) {
        guard let slot = slotOfKey[key] else { return }
        if slots[slot].armed != nil { armedCount -= 1 }
        slots[slot].armed = nil
        slots[slot].cancelled = true
        freeIfUnused(slot)
    }

    /// The earliest live deadline, dropping stale entries on the way.
    mutating func nextDeadline() -> Instant? {
        while let top = heap.min {
            if slots[top.slot].armed == top.sequence { return top.deadline }
            heap.removeMin()
            release(top.slot)
        }
        return nil
    }

    /// Removes and returns every live timer whose deadline is at or before `now`, in deadline order.
    mutating func popDue(now: Instant) -> [Key] {
        var due: [Key] = []
        while let top = heap.min, top.deadline <= now {
            heap.removeMin()
            if slots[top.slot].armed == top.sequence {
                slots[top.slot].armed = nil
                armedCount -= 1
                due.append(slots[top.slot].key)
            }
            release(top.slot)
        }
        return due
    }

    /// Slots ever allocated: at most the number of distinct keys armed at once, cancelled ones reused.
    var slotCount: Int { slots.count }

    /// Room for `additional` more armed timers without growing the heap or the tables on the way.
    mutating func reserveCapacity(forAdditional additional: Int) {
        heap.reserveCapacity(heap.count + additional)
        slotOfKey.reserveCapacity(slotOfKey.count + additional)
        slots.reserveCapacity(slots.count + additional)
    }

    private mutating func allocateSlot(for key: Key) -> Int {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = Slot(key: key)
        } else {
            slot = slots.count
            slots.append(Slot(key: key))
        }
        slotOfKey[key] = slot
        return slot
    }

    /// One heap entry of `slot` has left the heap.
    private mutating func release(_ slot: Int) {
        slots[slot].entries -= 1
        freeIfUnused(slot)
    }

    private mutating func freeIfUnused(_ slot: Int) {
        guard slots[slot].cancelled, slots[slot].entries == 0 else { return }
        slotOfKey[slots[slot].key] = nil
        slots[slot].cancelled = false
        freeSlots.append(slot)
    }
}
