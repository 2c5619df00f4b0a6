import GRDB

extension RegcodeStore {
    /// Whether the poll log keeps its index by device (`poll_attempts_by_device`).
    ///
    /// Every poll adds a row to that index, and at a large fleet each row lands on an index page of its own
    /// (polls come in no order of device), so every poll costs a page written to the write-ahead log and
    /// again to the file: at 80,000 devices about a fifth of the daemon's CPU. Without the index the log is
    /// written in time order only, and the per-device views (`regcodectl devices`, the console's device
    /// page, `report --device`) read it by time instead, which is slower the longer the log.
    package enum PollIndex: String, Sendable, CaseIterable {
        /// The index of `schema.sql` (the default).
        case device
        /// No index by device: the log is written in time order only.
        case none
    }

    static let pollIndexName = "poll_attempts_by_device"
    /// The index's statement as `schema.sql` has it, word for word, so a file that gets its index back has
    /// the schema of a new one.
    static var pollIndexSQL: String {
        let statement = schemaSQL.split(separator: "\n").first { $0.hasPrefix("CREATE INDEX \(pollIndexName) ") }
        guard let statement else { preconditionFailure("schema.sql has no \(pollIndexName)") }
        return String(statement)
    }

    /// Drops or creates the poll log's index by device so the file has `pollIndex`.
    /// - Returns: whether the file changed.
    func apply(_ pollIndex: PollIndex) throws -> Bool {
        try pool.write { db -> Bool in
            let present = try Self.hasPollIndex(db)
            switch (pollIndex, present) {
            case (.none, true):
                try db.execute(sql: "DROP INDEX \(Self.pollIndexName)")
                return true
            case (.device, false):
                // Building it reads the whole log once: say so before, as it can take a while.
                logger.notice("building the poll log's index by device", metadata: ["poll_index": "device"])
                try db.execute(sql: Self.pollIndexSQL)
                return true
            default:
                return false
            }
        }
    }

    /// Whether the file has the poll log's index by device.
    static func hasPollIndex(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'index' AND name = ?",
            arguments: [pollIndexName]
        ) ?? false
    }
}
