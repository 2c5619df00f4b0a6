import GRDB

/// Whether a database may be run as the shard asked for.
package enum ShardBinding: Sendable, Equatable {
    /// The database is (now) bound to the shard asked for.
    case bound
    /// The database holds another shard's devices (`stored`), or an unsharded fleet (`stored` nil).
    case mismatch(stored: String?)
}

extension RegcodeStore {
    /// Binds the database to `shard` (`K/N`; nil runs every device) on first use, or checks the
    /// binding it has: a database's configured devices are one slice of the fleets, and running it as
    /// another slice would remove them (identities, credentials, codes) and create the new slice's.
    ///
    /// A database without a recorded shard is unsharded if it holds configured devices (devices added
    /// over the socket are not sliced), and free otherwise: a new file takes the shard it is started with.
    package func bindShard(_ shard: String?) throws -> ShardBinding {
        try pool.write { db in
            let stored = try String.fetchOne(db, sql: "SELECT value FROM daemon_settings WHERE key = 'shard'")
            if let stored { return stored == shard ? .bound : .mismatch(stored: stored) }
            let configured = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM devices WHERE added_at_runtime = 0)") ?? false
            if configured { return shard == nil ? .bound : .mismatch(stored: nil) }
            if let shard {
                try db.execute(sql: "INSERT INTO daemon_settings (key, value) VALUES ('shard', ?)", arguments: [shard])
            }
            return .bound
        }
    }
}
