import GRDB
import RegcodeEngine

extension RegcodeStore {
    /// A device's latest logged polls, newest first: the console's device page and `devices.polls`.
    public func recentPolls(of device: String, limit: Int) async throws -> [PollAttempt] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms
                    FROM poll_attempts WHERE device = ? ORDER BY sent_at DESC, id DESC LIMIT ?
                    """,
                arguments: [device, limit]
            )
            return try rows.map { row in
                let outcome: String = row["outcome"]
                guard let parsed = PollOutcome(rawValue: outcome) else {
                    throw RegcodeStoreError.corruptRow(table: "poll_attempts", key: device, reason: "unknown outcome \(outcome)")
                }
                return PollAttempt(
                    code: row["code"],
                    plannedEpochMs: row["planned_at"],
                    sentEpochMs: row["sent_at"],
                    latencyMs: row["latency_ms"],
                    httpStatus: row["http_status"],
                    outcome: parsed,
                    nextDelayMs: row["next_delay_ms"]
                )
            }
        }
    }
}
