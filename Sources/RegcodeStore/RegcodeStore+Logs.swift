import Foundation
import GRDB
import Logging
import RegcodeEngine
import RegcodeRecords
import RegcodeSupport

extension RegcodeStore {
    /// Stored events with `seq > after`, oldest first, at most `limit`.
    ///
    /// `devices` / `names` restrict the device names and callback names; `nil` means any, an
    /// empty set means none.
    package func events(after seq: Int64, devices: Set<String>?, names: Set<String>?, limit: Int) async throws -> [StoredEvent] {
        guard limit > 0, devices?.isEmpty != true, names?.isEmpty != true else { return [] }
        let json = JSONColumns()
        // Sets are bound as one JSON array and expanded with json_each, so a filter of thousands
        // of devices stays one cacheable statement under SQLite's host-parameter limit.
        var sql = "SELECT seq, device, time, name, args, app FROM events WHERE seq > ?"
        var arguments: StatementArguments = [seq]
        if let devices {
            sql += " AND device IN (SELECT value FROM json_each(?))"
            arguments += [JSONWriter.text(.array(devices.sorted().map(JSONValue.string)))]
        }
        if let names {
            sql += " AND name IN (SELECT value FROM json_each(?))"
            arguments += [JSONWriter.text(.array(names.sorted().map(JSONValue.string)))]
        }
        sql += " ORDER BY seq LIMIT ?"
        arguments += [limit]
        let finalSQL = sql
        let finalArguments = arguments
        return try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: finalSQL), arguments: finalArguments)
            var events: [StoredEvent] = []
            while let row = try rows.next() {
                let seq: Int64 = row["seq"]
                events.append(
                    StoredEvent(
                        seq: seq,
                        device: row["device"],
                        app: row["app"] ?? DeviceStep.defaultApp,
                        time: row["time"],
                        name: row["name"],
                        args: try json.args(from: row["args"], table: "events", key: "\(seq)")
                    )
                )
            }
            return events
        }
    }

    /// The highest sequence number ever assigned (0 before the first event), including pruned ones.
    package func lastEventSequence() async throws -> Int64 {
        try await pool.read { db in
            // sqlite_sequence, not MAX(seq): it still knows the last number after pruning.
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'") ?? 0
        }
    }

    /// The `WHERE` clause the logs share: one device and/or at or after a time (in `timeColumn`).
    static func logFilter(device: String?, sinceEpochMs: Int64?, timeColumn: String = "sent_at") -> (sql: String, arguments: StatementArguments) {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let device {
            conditions.append("device = ?")
            arguments += [device]
        }
        if let sinceEpochMs {
            conditions.append("\(timeColumn) >= ?")
            arguments += [sinceEpochMs]
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// Logged polls, in send order; optionally of one device and/or sent at or after a time.
    package func pollAttempts(device: String?, sinceEpochMs: Int64?) async throws -> [StoredPollAttempt] {
        let (filter, finalArguments) = Self.logFilter(device: device, sinceEpochMs: sinceEpochMs)
        let sql = """
            SELECT device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms
            FROM poll_attempts\(filter) ORDER BY sent_at, id
            """
        return try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: finalArguments)
            var attempts: [StoredPollAttempt] = []
            while let row = try rows.next() {
                attempts.append(
                    StoredPollAttempt(
                        device: row["device"],
                        attempt: PollAttempt(row: row)
                    )
                )
            }
            return attempts
        }
    }

    /// Logged backend requests other than polls, in send order; optionally of one device and/or
    /// sent at or after a time. A read-only store of schema version 1 (no request log) returns none.
    package func requestAttempts(device: String?, sinceEpochMs: Int64?) async throws -> [StoredRequestAttempt] {
        guard fileSchemaVersion >= 2 else { return [] }
        let (filter, finalArguments) = Self.logFilter(device: device, sinceEpochMs: sinceEpochMs)
        let sql = """
            SELECT device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms
            FROM request_attempts\(filter) ORDER BY sent_at, id
            """
        return try await pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: finalArguments)
            var attempts: [StoredRequestAttempt] = []
            while let row = try rows.next() {
                attempts.append(
                    StoredRequestAttempt(
                        device: row["device"],
                        attempt: RequestAttempt(
                            // Stages and outcomes of other versions read back as they were stored.
                            stage: RequestStage(rawValue: row["stage"]),
                            endpoint: row["endpoint"],
                            sentEpochMs: row["sent_at"],
                            latencyMs: row["latency_ms"],
                            httpStatus: row["http_status"],
                            outcome: RequestOutcome(rawValue: row["outcome"]),
                            errorCode: row["error_code"],
                            retryDelayMs: row["retry_delay_ms"]
                        )
                    )
                )
            }
            return attempts
        }
    }

    /// Retention: deletes poll attempts and other request attempts sent before `pollAttemptsBefore`
    /// (the request log is kept as long as the poll log) and events that happened before
    /// `eventsBefore` (epoch milliseconds; `nil` leaves that log alone).
    ///
    /// Deletes in bounded batches, one transaction each, so `apply` and readers are never held up
    /// for long. Event sequence numbers are never reused.
    /// - Returns: how many rows were deleted from each log.
    package func prune(pollAttemptsBefore: Int64?, eventsBefore: Int64?) async throws -> (polls: Int, requests: Int, events: Int) {
        var polls = 0
        var requests = 0
        var events = 0
        if let cutoff = pollAttemptsBefore {
            polls = try await deleteInBatches(
                "DELETE FROM poll_attempts WHERE id IN (SELECT id FROM poll_attempts WHERE sent_at < ? LIMIT ?)",
                cutoff: cutoff
            )
            requests = try await deleteInBatches(
                "DELETE FROM request_attempts WHERE id IN (SELECT id FROM request_attempts WHERE sent_at < ? LIMIT ?)",
                cutoff: cutoff
            )
            // Logins are history like the poll log (not counted among the pruned rows reported).
            _ = try await deleteInBatches("DELETE FROM logins WHERE id IN (SELECT id FROM logins WHERE time < ? LIMIT ?)", cutoff: cutoff)
        }
        if let cutoff = eventsBefore {
            events = try await deleteInBatches(
                "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE time < ? LIMIT ?)",
                cutoff: cutoff
            )
        }
        if polls > 0 || requests > 0 || events > 0 {
            logger.info("pruned logs", metadata: ["polls": "\(polls)", "requests": "\(requests)", "events": "\(events)"])
        }
        return (polls, requests, events)
    }

    static let pruneBatchSize = 5_000

    private func deleteInBatches(_ sql: String, cutoff: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.write { db in
                try db.cachedStatement(sql: sql).execute(arguments: [cutoff, Self.pruneBatchSize])
                return db.changesCount
            }
            total += deleted
            if deleted < Self.pruneBatchSize { return total }
        }
    }
}
