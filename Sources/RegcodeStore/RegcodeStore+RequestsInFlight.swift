import GRDB
import RegcodeRecords

extension RegcodeStore {
    /// Requests a previous run left in flight, logged at start.
    package struct InterruptedRequests: Sendable, Equatable {
        /// Requests by stage (polls under `poll`).
        package var byStage: [RequestStage: Int] = [:]

        package var polls: Int { byStage[.poll, default: 0] }
        package var requests: Int { total - polls }
        package var total: Int { byStage.values.reduce(0, +) }

        package init() {}
    }

    /// Moves every request left in `requests_in_flight` into the poll or request log as `interrupted`, in one
    /// transaction: the daemon stopped (was killed) after storing the request and before storing its answer, so the
    /// answer never reached the device. Rows of devices no longer stored are dropped (their answers were dropped
    /// with them). Called at start, before any device sends; one daemon owns the file then.
    package func recordInterruptedRequests() async throws -> InterruptedRequests {
        try await pool.write { db in
            var found = InterruptedRequests()
            try db.execute(sql: "DELETE FROM requests_in_flight WHERE device NOT IN (SELECT name FROM devices)")
            for row in try Row.fetchAll(db, sql: "SELECT stage, count(*) AS n FROM requests_in_flight GROUP BY stage") {
                let stage = RequestStage(rawValue: row["stage"])
                let count: Int = row["n"]
                found.byStage[stage] = count
            }
            guard found.total > 0 else { return found }
            try db.execute(
                sql: """
                    INSERT INTO poll_attempts (device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms)
                    SELECT device, coalesce(code, ''), coalesce(planned_at, sent_at), sent_at, NULL, 0, ?, NULL
                    FROM requests_in_flight WHERE stage = ? ORDER BY id
                    """,
                arguments: [PollOutcome.interrupted.rawValue, RequestStage.poll.rawValue]
            )
            try db.execute(
                sql: """
                    INSERT INTO request_attempts (device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms)
                    SELECT device, stage, endpoint, sent_at, NULL, 0, ?, NULL, NULL
                    FROM requests_in_flight WHERE stage != ? ORDER BY id
                    """,
                arguments: [RequestOutcome.interrupted.rawValue, RequestStage.poll.rawValue]
            )
            try db.execute(sql: "DELETE FROM requests_in_flight")
            return found
        }
    }
}
