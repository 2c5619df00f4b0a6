/// A dictionary that reports every write to the state journal, so the state file follows memory change by change.
///
/// Without a journal (memory-only simulator) it is a plain dictionary. Reads never report anything; a write of
/// `nil` reports a deletion.
struct TrackedMap<Key: Hashable & Sendable, Value: Sendable>: Sequence {
    private(set) var storage: [Key: Value] = [:]
    private var journal: StateJournal?
    private let change: @Sendable (Key, Value?) -> StateChange

    init(_ change: @escaping @Sendable (Key, Value?) -> StateChange) {
        self.change = change
    }

    /// Takes in `records` read from the state file (a record already in memory wins), then reports every write to
    /// `journal`, starting with the records that were only in memory.
    mutating func attach(_ journal: StateJournal, restoring records: some Sequence<(Key, Value)>) {
        let earlier = self.storage
        for (key, value) in records where self.storage[key] == nil {
            self.storage[key] = value
        }
        self.journal = journal
        for (key, value) in earlier {
            journal.record(self.change(key, value))
        }
    }

    subscript(key: Key) -> Value? {
        get { self.storage[key] }
        set {
            self.storage[key] = newValue
            self.journal?.record(self.change(key, newValue))
        }
    }

    subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self.storage[key] ?? defaultValue() }
        set { self[key] = newValue }
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let old = self.storage[key] else { return nil }
        self[key] = nil
        return old
    }

    var values: Dictionary<Key, Value>.Values { self.storage.values }
    var keys: Dictionary<Key, Value>.Keys { self.storage.keys }
    var isEmpty: Bool { self.storage.isEmpty }
    var count: Int { self.storage.count }

    func makeIterator() -> Dictionary<Key, Value>.Iterator {
        self.storage.makeIterator()
    }
}
