import GRDB
import RegcodeEngine

/// One row of the login log: a profile the device newly held, and how the user got it.
package struct StoredLogin: Sendable, Equatable {
    package var device: String
    /// Milliseconds since the Unix epoch.
    package var epochMs: Int64
    package var mvpd: String
    /// The stored kind (`regular`, `temppass`, `degraded`, `sso`); kept as text so a kind another version
    /// wrote still reads.
    package var kind: String

    package init(device: String, epochMs: Int64, mvpd: String, kind: String) {
        self.device = device
        self.epochMs = epochMs
        self.mvpd = mvpd
        self.kind = kind
    }
}

extension RegcodeStore {
    /// Logins in time order; optionally of one device and/or at or after a time. A read-only store of a schema
    /// version before 5 (no login log) returns nil: the report then leaves logins out rather than showing zeros.
    package func logins(device: String?, sinceEpochMs: Int64?) async throws -> [StoredLogin]? {
        guard fileSchemaVersion >= 5 else { return nil }
        let (filter, finalArguments) = Self.logFilter(device: device, sinceEpochMs: sinceEpochMs, timeColumn: "time")
        let sql = "SELECT device, time, mvpd, kind FROM logins\(filter) ORDER BY time, id"
        return try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: finalArguments)
            var logins: [StoredLogin] = []
            while let row = try rows.next() {
                logins.append(StoredLogin(device: row["device"], epochMs: row["time"], mvpd: row["mvpd"], kind: row["kind"]))
            }
            return logins
        }
    }
}
