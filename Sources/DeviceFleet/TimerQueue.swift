import HeapModule
import RegcodeEngine

/// One min-heap of deadlines for every timer of every device in the fleet.
///
/// Cancelled or re-armed timers are not removed from the heap (that would be O(n)); each entry
/// carries the sequence number it was armed with and stale ones are skipped when they surface.
///
/// The heap holds plain integers: a deadline as nanoseconds from the queue's first one, and a key's
/// slot number instead of the key. The heap compares and copies its elements at every level it
/// sifts through (17 levels at 70,000 devices): a key holding a device name made each copy a retain
/// and a release and each surfacing entry a hash of that name, and a generic instant made each
/// comparison and copy a call (together ~4 % of the daemon at 60,000–70,000 devices). The exact
/// instant of a live arming stays in its slot. A key keeps its slot while it is armed or has
/// entries in the heap, and until it is cancelled, so a timer re-armed after it fires (a poll) finds
/// its slot in place.
struct TimerQueue<Key: Hashable> {
    typealias Instant = DeviceInstant

    /// A live arming: the sequence number its heap entry carries, and its exact deadline.
    private struct Arming {
        var sequence: UInt64
        var deadline: Instant
    }

    private struct Slot {
        var key: Key
        /// The live arming; nil while not armed.
        var armed: Arming?
        /// Heap entries that name this slot, live or stale.
        var entries = 0
        /// Whether the key was cancelled: its slot is freed once its last entry leaves the heap.
        var cancelled = false
    }

    private var heap = Heap<TimerHeapEntry>()
    /// The instant deadlines are counted from in the heap: the first one the queue was given (a deadline, or a `now`).
    private var origin: Instant?
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
        slots[slot].armed = Arming(sequence: sequence, deadline: deadline)
        slots[slot].entries += 1
        slots[slot].cancelled = false
        heap.insert(TimerHeapEntry(ticks: ticks(of: deadline), sequence: sequence, slot: slot))
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
            if let armed = slots[top.slot].armed, armed.sequence == top.sequence { return armed.deadline }
            heap.removeMin()
            release(top.slot)
        }
        return nil
    }

    /// Removes and returns every live timer whose deadline is at or before `now`, in deadline order.
    mutating func popDue(now: Instant) -> [Key] {
        var due: [Key] = []
        let nowTicks = ticks(of: now)
        while let top = heap.min, top.ticks <= nowTicks {
            let live = slots[top.slot].armed?.sequence == top.sequence
            // Ticks are whole nanoseconds: within the same one, the exact instant decides.
            if live, top.ticks == nowTicks, let armed = slots[top.slot].armed, armed.deadline > now { break }
            heap.removeMin()
            if live {
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

    /// Whole nanoseconds from the queue's origin, rounded down.
    private mutating func ticks(of instant: Instant) -> Int64 {
        guard let origin else {
            origin = instant
            return 0
        }
        let (seconds, attoseconds) = origin.duration(to: instant).components
        // Floor division, so an instant a fraction of a nanosecond before another never sorts after it.
        let nanoseconds = attoseconds >= 0 ? attoseconds / 1_000_000_000 : (attoseconds - 999_999_999) / 1_000_000_000
        return seconds * 1_000_000_000 + nanoseconds
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

/// A heap entry of ``TimerQueue``: integers only, outside the generic queue, so the heap's code is compiled for it
/// and compares and moves it inline.
struct TimerHeapEntry: Comparable {
    /// The deadline, in nanoseconds from the queue's origin.
    var ticks: Int64
    var sequence: UInt64
    var slot: Int

    static func < (lhs: TimerHeapEntry, rhs: TimerHeapEntry) -> Bool {
        lhs.ticks == rhs.ticks ? lhs.sequence < rhs.sequence : lhs.ticks < rhs.ticks
    }

    static func == (lhs: TimerHeapEntry, rhs: TimerHeapEntry) -> Bool {
        lhs.ticks == rhs.ticks && lhs.sequence == rhs.sequence
    }
}
