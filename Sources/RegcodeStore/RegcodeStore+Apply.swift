import Foundation
import GRDB
import Logging
import RegcodeEngine

extension RegcodeStore {
    /// Stores many engine steps in one transaction, in order: each step's snapshot (device row,
    /// credentials, access token, codes, profile), then its poll attempts, then its other backend
    /// requests, then its events.
    ///
    /// A step for a device that is not stored (removed while the step was queued) keeps its polls,
    /// requests and events but its snapshot is dropped. Either every step is stored or, on error, none.
    /// - Returns: the stored events with their sequence numbers, in order.
    package func apply(_ steps: [DeviceStep]) async throws -> [StoredEvent] {
        guard !steps.isEmpty else { return [] }
        let json = JSONColumns()
        let applied = try await pool.write { db -> AppliedSteps in
            let statements = try LogStatements(db)
            var applied = AppliedSteps()
            for step in steps {
                try Self.write(step, statements: statements, json: json, db: db, into: &applied)
            }
            return applied
        }
        if !applied.unknown.isEmpty {
            // Expected when a device is removed while its steps are queued, hence not a warning.
            logger.notice(
                "dropped snapshots of devices that are not stored",
                metadata: ["devices": "\(applied.unknown.sorted().joined(separator: ","))"]
            )
        }
        logger.trace(
            "applied steps",
            metadata: [
                "steps": "\(steps.count)", "polls": "\(applied.polls)", "requests": "\(applied.requests)",
                "events": "\(applied.stored.count)",
            ]
        )
        return applied.stored
    }

    /// What one `apply` stored: the events with their sequence numbers, the devices whose snapshots were dropped
    /// (not stored), and how many polls and requests were logged.
    private struct AppliedSteps {
        var stored: [StoredEvent] = []
        var unknown: Set<String> = []
        var polls = 0
        var requests = 0
    }

    /// The log inserts, cached: a batch repeats the same few statements thousands of times.
    private struct LogStatements {
        let insertPoll: Statement
        let insertRequest: Statement
        let insertEvent: Statement
        let deleteInFlight: Statement
        let insertInFlight: Statement

        init(_ db: Database) throws {
            deleteInFlight = try db.cachedStatement(sql: "DELETE FROM requests_in_flight WHERE id = ?")
            insertInFlight = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO requests_in_flight (id, device, app, stage, endpoint, code, planned_at, sent_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            insertPoll = try db.cachedStatement(
                sql: """
                    INSERT INTO poll_attempts (device, code, planned_at, sent_at, http_status, latency_ms, outcome, next_delay_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            insertRequest = try db.cachedStatement(
                sql: """
                    INSERT INTO request_attempts (device, stage, endpoint, sent_at, http_status, latency_ms, outcome, error_code, retry_delay_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            insertEvent = try db.cachedStatement(sql: "INSERT INTO events (device, time, name, args, app) VALUES (?, ?, ?, ?, ?)")
        }
    }

    /// Stores one step: its snapshot (or app snapshot) and tokens, then its polls, requests and events; the request it
    /// answered leaves `requests_in_flight` and the one it sends next enters it.
    private static func write(
        _ step: DeviceStep,
        statements: LogStatements,
        json: JSONColumns,
        db: Database,
        into applied: inout AppliedSteps
    )
        throws
    {
        if let snapshot = step.snapshot {
            let written =
                step.isFirstApp
                ? try writeSnapshot(
                    snapshot,
                    endedCodes: step.endedCodes,
                    device: step.device,
                    at: step.epochMs,
                    json: json,
                    db: db,
                    recordingLogins: true
                )
                : try writeAppSnapshot(snapshot, device: step.device, app: step.app, at: step.epochMs, json: json, db: db)
            if !written { applied.unknown.insert(step.device) }
        }
        if let tokens = step.tokens {
            try writeTokens(tokens, device: step.device, db: db)
        }
        // The default app's name is not repeated in every row of a plain device.
        let app: String? = step.app == DeviceStep.defaultApp ? nil : step.app
        for poll in step.polls {
            // Outcomes are stored as their text.
            try statements.insertPoll.execute(arguments: [
                step.device, poll.code, poll.plannedEpochMs, poll.sentEpochMs, poll.httpStatus,
                poll.latencyMs, poll.outcome.rawValue, poll.nextDelayMs,
            ])
        }
        applied.polls += step.polls.count
        for request in step.requests {
            try statements.insertRequest.execute(arguments: [
                step.device, request.stage.rawValue, request.endpoint, request.sentEpochMs, request.httpStatus,
                request.latencyMs, request.outcome.rawValue, request.errorCode, request.retryDelayMs,
            ])
        }
        applied.requests += step.requests.count
        if let answered = step.answeredRequest {
            try statements.deleteInFlight.execute(arguments: [Int64(bitPattern: answered)])
        }
        if let sent = step.sentRequest {
            try statements.insertInFlight.execute(arguments: [
                Int64(bitPattern: sent.id), step.device, step.app, sent.stage.rawValue, sent.endpoint, sent.pollCode,
                sent.plannedEpochMs, sent.sentEpochMs,
            ])
        }
        for event in step.events {
            try statements.insertEvent.execute(arguments: [step.device, step.epochMs, event.name, json.argsText(event.args), app])
            applied.stored.append(
                StoredEvent(
                    seq: db.lastInsertedRowID,
                    device: step.device,
                    app: step.app,
                    time: step.epochMs,
                    name: event.name,
                    args: event.args
                )
            )
        }
    }

    /// Writes a snapshot over a stored device. Returns `false` when the device is not stored.
    static func writeSnapshot(
        _ snapshot: DeviceSnapshot,
        endedCodes: [CodeEnding] = [],
        device: String,
        at time: Int64,
        json: JSONColumns,
        db: Database,
        recordingLogins: Bool = false
    ) throws -> Bool {
        let update = try db.cachedStatement(
            sql: """
                UPDATE devices SET state = ?, selected_mvpd = ?, mvpds = ?, options = ?, renewals = ?, oauth_state = ?, updated_at = ?
                WHERE name = ?
                """
        )
        try update.execute(arguments: [
            snapshot.phase.rawValue, snapshot.selectedMVPD, try snapshot.mvpds.map { try json.text($0) },
            try json.text(snapshot.options), snapshot.renewals, try snapshot.oauth.map { try json.text($0) }, time, device,
        ])
        guard db.changesCount > 0 else { return false }
        try writeDependents(of: snapshot, endedCodes: endedCodes, device: device, at: time, db: db, recordingLogins: recordingLogins)
        return true
    }

    /// Upserts or deletes the rows that hang off a device so that they match `snapshot`.
    /// - Parameter recordingLogins: a profile that is new or changed (another MVPD, user, expiry or type) is a
    ///   login, added to `logins` with its kind; set for the engine's own steps, not for devices being saved.
    static func writeDependents(
        of snapshot: DeviceSnapshot,
        endedCodes: [CodeEnding] = [],
        device: String,
        at time: Int64,
        db: Database,
        recordingLogins: Bool = false
    ) throws {
        // The upserts leave an identical row untouched, so registered_at / obtained_at /
        // authenticated_at keep the time the value first appeared (and no page is rewritten).
        if let credentials = snapshot.credentials {
            try db.cachedStatement(
                sql: """
                    INSERT INTO client_credentials (device, client_id, client_secret, registered_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (device) DO UPDATE SET
                        client_id = excluded.client_id, client_secret = excluded.client_secret, registered_at = excluded.registered_at
                    WHERE client_id IS NOT excluded.client_id OR client_secret IS NOT excluded.client_secret
                    """
            ).execute(arguments: [device, credentials.clientID, credentials.clientSecret, time])
        } else {
            try db.cachedStatement(sql: "DELETE FROM client_credentials WHERE device = ?").execute(arguments: [device])
        }

        if let token = snapshot.accessToken {
            try db.cachedStatement(
                sql: """
                    INSERT INTO access_tokens (device, token, expires_at, obtained_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (device) DO UPDATE SET
                        token = excluded.token, expires_at = excluded.expires_at, obtained_at = excluded.obtained_at
                    WHERE token IS NOT excluded.token OR expires_at IS NOT excluded.expires_at
                    """
            ).execute(arguments: [device, token.token, token.expiresEpochMs, time])
        } else {
            try db.cachedStatement(sql: "DELETE FROM access_tokens WHERE device = ?").execute(arguments: [device])
        }

        try writeCode(of: snapshot, endedCodes: endedCodes, device: device, at: time, db: db)

        if let profile = snapshot.profile {
            try db.cachedStatement(
                sql: """
                    INSERT INTO auth_profiles (device, mvpd, user_id, expires_at, authenticated_at, type) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (device) DO UPDATE SET
                        mvpd = excluded.mvpd, user_id = excluded.user_id, expires_at = excluded.expires_at,
                        authenticated_at = excluded.authenticated_at, type = excluded.type
                    WHERE mvpd IS NOT excluded.mvpd OR user_id IS NOT excluded.user_id OR expires_at IS NOT excluded.expires_at
                        OR type IS NOT excluded.type
                    """
            ).execute(arguments: [device, profile.mvpd, profile.userID, profile.expiresEpochMs, time, profile.type.rawValue])
            if recordingLogins && db.changesCount > 0 {
                try db.cachedStatement(sql: "INSERT INTO logins (device, time, mvpd, kind) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [device, time, profile.mvpd, profile.loginKind.rawValue])
            }
        } else {
            try db.cachedStatement(sql: "DELETE FROM auth_profiles WHERE device = ?").execute(arguments: [device])
        }
    }

    /// Keeps the device's pending `codes` row equal to `snapshot.code`.
    ///
    /// A pending code that is no longer the snapshot's ends as the engine said (`endedCodes`); a
    /// code dropped without a word (a device reset) ends as `cancelled`.
    private static func writeCode(of snapshot: DeviceSnapshot, endedCodes: [CodeEnding], device: String, at time: Int64, db: Database) throws {
        let pending: PendingCode? = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, code, mvpd, expires_at FROM codes WHERE device = ? AND status = 'pending'"),
            arguments: [device]
        ).map { PendingCode(id: $0["id"], code: $0["code"], mvpd: $0["mvpd"], expiresAt: $0["expires_at"]) }
        if let pending, let code = snapshot.code, pending.code == code.code {
            // The same code: only its details can have changed.
            if pending.mvpd != code.mvpd || pending.expiresAt != code.expiresEpochMs {
                try db.cachedStatement(sql: "UPDATE codes SET mvpd = ?, expires_at = ? WHERE id = ?")
                    .execute(arguments: [code.mvpd, code.expiresEpochMs, pending.id])
            }
            return
        }
        if let pending {
            let outcome = endedCodes.last { $0.code == pending.code }?.outcome ?? .cancelled
            let status = Self.status(of: outcome)
            try db.cachedStatement(sql: "UPDATE codes SET status = ?, ended_at = ? WHERE id = ?")
                .execute(arguments: [status, time, pending.id])
        }
        if let code = snapshot.code {
            try db.cachedStatement(
                sql: """
                    INSERT INTO codes (device, code, mvpd, issued_at, expires_at, status) VALUES (?, ?, ?, ?, ?, 'pending')
                    """
            ).execute(arguments: [device, code.code, code.mvpd, time, code.expiresEpochMs])
        }
    }

    private struct PendingCode {
        var id: Int64
        var code: String
        var mvpd: String?
        var expiresAt: Int64
    }

    /// The `codes.status` of an ending. The column keeps its documented values: a code the backend
    /// refused or that polling gave up on is `cancelled` (the reason is in the event log).
    static func status(of outcome: CodeOutcome) -> String {
        switch outcome {
        case .authenticated: "authenticated"
        case .expired: "expired"
        case .replaced: "replaced"
        case .cancelled, .failed: "cancelled"
        }
    }
}
