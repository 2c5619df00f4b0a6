import GRDB
import RegcodeEngine
import RegcodeRecords

extension RegcodeStore {
    /// A device's latest logged polls, newest first: the console's device page and `devices.polls`.
    package func recentPolls(of device: String, limit: Int) async throws -> [PollAttempt] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms
                    FROM poll_attempts WHERE device = ? ORDER BY sent_at DESC, id DESC LIMIT ?
                    """,
                arguments: [device, limit]
            )
            return rows.map(PollAttempt.init(row:))
        }
    }
}

extension PollAttempt {
    /// A logged poll as a `poll_attempts` row holds it.
    init(row: Row) {
        self.init(
            code: row["code"],
            plannedEpochMs: row["planned_at"],
            sentEpochMs: row["sent_at"],
            latencyMs: row["latency_ms"],
            httpStatus: row["http_status"],
            // Outcomes of other versions read back as they were stored.
            outcome: PollOutcome(rawValue: row["outcome"]),
            nextDelayMs: row["next_delay_ms"]
        )
    }
}
