import GRDB

extension RegcodeStore {
    /// The statements that turn a database of `version - 1` into `version`, keyed by `version`.
    ///
    /// Each runs inside the opening transaction, so a migration is all or nothing. A migrated file
    /// has the tables and indexes `schema.sql` creates, with the same text (new columns come last and
    /// their constraints are partial indexes, because ALTER TABLE can only add a plain column).
    static let migrations: [Int32: String] = [
        2: """
        ALTER TABLE devices ADD COLUMN client_address TEXT;
        CREATE UNIQUE INDEX devices_by_client_address ON devices(client_address) WHERE client_address IS NOT NULL;
        CREATE TABLE request_attempts (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            device          TEXT NOT NULL,
            stage           TEXT NOT NULL,                      -- registration, token, configuration, session, profile, decision, metadata, logout
            endpoint        TEXT NOT NULL,                      -- the endpoint's short name
            sent_at         INTEGER NOT NULL,
            http_status     INTEGER,                            -- NULL on transport errors
            latency_ms      REAL NOT NULL,
            outcome         TEXT NOT NULL,                      -- ok, throttled, server-error, transport-error, malformed, unauthorized, client-error, abandoned
            error_code      TEXT,                               -- Adobe's enhanced or DCR error code, when the answer carried one
            retry_delay_ms  INTEGER                             -- the wait before the same request was tried again; NULL: not retried
        );
        CREATE INDEX request_attempts_by_device ON request_attempts(device, sent_at);
        CREATE INDEX request_attempts_by_time ON request_attempts(sent_at);
        PRAGMA user_version = 2;
        """
    ]

    /// The oldest schema version this build can migrate from.
    static let oldestMigratableVersion: Int32 = 1

    /// Brings a database of `version` up to ``schemaVersion`` inside the caller's transaction.
    /// - Returns: the versions it migrated through, e.g. `[2]`.
    static func migrate(_ db: Database, from version: Int32) throws -> [Int32] {
        var applied: [Int32] = []
        var current = version
        while current < schemaVersion {
            let next = current + 1
            guard let sql = migrations[next] else {
                preconditionFailure("no migration to schema version \(next)")
            }
            try db.execute(sql: sql)
            applied.append(next)
            current = next
        }
        return applied
    }
}
