import Foundation
import GRDB
import Logging
import RegcodeEngine

extension RegcodeStore {
    /// Every stored device with its reconstructed snapshot, oldest first.
    ///
    /// Settings come back without `softwareStatement` and `signingKeys` (never stored).
    package func loadDevices() async throws -> [StoredDevice] {
        try await loadDevices(only: nil)
    }

    /// One stored device with its reconstructed snapshot, as ``loadDevices()`` reads it; nil when none is stored
    /// under `name`. Reads that device's rows only: a reset of one device among 90,000 costs one device.
    package func loadDevice(named name: String) async throws -> StoredDevice? {
        try await loadDevices(only: name).first
    }

    private func loadDevices(only: String?) async throws -> [StoredDevice] {
        try await pool.read { db in
            let json = JSONColumns()
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT d.name, d.device_id, d.scenario, d.settings, d.seed,
                           d.state, d.selected_mvpd, d.mvpds, d.options, d.renewals,
                           cc.client_id, cc.client_secret,
                           t.token, t.expires_at AS token_expires_at,
                           c.code, c.expires_at AS code_expires_at, c.mvpd AS code_mvpd,
                           p.mvpd AS profile_mvpd, p.user_id AS profile_user_id, p.expires_at AS profile_expires_at, p.type AS profile_type,
                           d.fleet, d.added_at_runtime, d.client_address, d.oauth_state
                    FROM devices d
                    LEFT JOIN client_credentials cc ON cc.device = d.name
                    LEFT JOIN access_tokens t ON t.device = d.name
                    LEFT JOIN codes c ON c.device = d.name AND c.status = 'pending'
                    LEFT JOIN auth_profiles p ON p.device = d.name
                    \(only == nil ? "" : "WHERE d.name = ?")
                    ORDER BY d.created_at, d.name
                    """,
                // Two statements rather than `?1 IS NULL OR …`, which SQLite cannot answer from an index.
                arguments: StatementArguments(only.map { [$0] } ?? [])
            )
            var reader = DeviceRowReader(columns: DeviceColumns(rows.columnNames), json: json)
            var devices: [StoredDevice] = []
            if only == nil { devices.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM devices") ?? 0) }
            let apps = try Self.loadApps(db, json: json, device: only)
            let tokens = try Self.loadTokens(db, device: only)
            let tvProviders = try Self.loadTVProviders(db, device: only)
            while let row = try rows.next() {
                var device = try reader.device(from: row)
                device.apps = apps[device.name] ?? []
                device.tokens = tokens[device.name] ?? []
                device.tvProvider = tvProviders[device.name]
                devices.append(device)
            }
            return devices
        }
    }

    /// Adds a device, or replaces a stored device's configuration and state with `device`.
    ///
    /// An existing row keeps its `device_id`: the backend knows the device by it. It also keeps its
    /// client address when `device.clientAddress` is `nil` (a record made before the address was
    /// assigned must not drop it); a non-nil address replaces it. The stored state becomes
    /// `device.snapshot` (a pending code that is not in it ends as `cancelled`), so save a device
    /// only while no engine step for it is queued: when adding it, when reconciling at start, when
    /// resetting it. Secrets in the settings are not stored (see ``loadDevices()``).
    /// - Throws: ``RegcodeStoreError/clientAddressInUse(address:device:)`` when another device has
    ///   `device.clientAddress`; nothing is written then.
    package func saveDevice(_ device: StoredDevice) async throws {
        try await saveDevices([device])
    }

    /// Stores `devices` (new or existing, as ``saveDevice(_:)``) in one transaction: a first start
    /// with tens of thousands of configured devices would otherwise pay a commit per device.
    package func saveDevices(_ devices: [StoredDevice]) async throws {
        guard !devices.isEmpty else { return }
        let json = JSONColumns()
        let columns = try devices.map { device in
            (settings: try json.settingsText(device.settings), deviceInfo: try json.text(device.settings.deviceInfo))
        }
        let now = Self.wallClockMs()
        let keptIDs: [String?] = try await pool.write { db in
            let select = try db.cachedStatement(sql: "SELECT device_id FROM devices WHERE name = ?")
            let update = try db.cachedStatement(
                sql: """
                    UPDATE devices SET device_info = ?, profile = ?, requestor = ?, scenario = ?, settings = ?,
                                       seed = ?, fleet = ?, added_at_runtime = ?, client_address = coalesce(?, client_address)
                    WHERE name = ?
                    """
            )
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO devices (name, device_id, device_info, profile, requestor, scenario, settings, seed,
                                         fleet, added_at_runtime, state, created_at, updated_at, client_address)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            var kept: [String?] = []
            kept.reserveCapacity(devices.count)
            for (device, column) in zip(devices, columns) {
                let existing = try String.fetchOne(select, arguments: [device.name])
                if let address = device.clientAddress {
                    try Self.checkClientAddressIsFree(address, for: device.name, db: db)
                }
                if existing != nil {
                    try update.execute(arguments: [
                        column.deviceInfo, device.settings.profile.rawValue, device.settings.requestor, device.scenario.rawValue,
                        column.settings, Int64(bitPattern: device.seed), device.fleet, device.addedAtRuntime, device.clientAddress,
                        device.name,
                    ])
                } else {
                    // State columns start empty; writeSnapshot below fills them like any later step.
                    try insert.execute(arguments: [
                        device.name, device.deviceID, column.deviceInfo, device.settings.profile.rawValue, device.settings.requestor,
                        device.scenario.rawValue, column.settings, Int64(bitPattern: device.seed), device.fleet, device.addedAtRuntime,
                        DevicePhase.new.rawValue, now, now, device.clientAddress,
                    ])
                }
                _ = try Self.writeSnapshot(device.snapshot, device: device.name, at: now, json: json, db: db)
                try Self.writeApps(device.apps, device: device.name, at: now, json: json, db: db)
                try Self.writeTokens(device.tokens, device: device.name, db: db)
                try Self.writeTVProvider(device.tvProvider, device: device.name, at: now, db: db)
                kept.append(existing)
            }
            return kept
        }
        for (device, keptID) in zip(devices, keptIDs) {
            if let keptID, keptID != device.deviceID {
                logger.notice("kept the stored device id of an existing device", metadata: ["device": "\(device.name)"])
            } else if keptID == nil {
                logger.debug("device added", metadata: ["device": "\(device.name)"])
            }
        }
    }

    /// Deletes a device with its credentials, token, codes and profile.
    ///
    /// Its poll attempts and events stay: they are history, and event sequence numbers already
    /// handed to subscribers must stay resolvable until retention prunes them.
    /// - Returns: whether the device existed.
    package func removeDevice(named name: String) async throws -> Bool {
        let removed = try await pool.write { db in
            try db.execute(sql: "DELETE FROM devices WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
        if removed { logger.debug("device removed", metadata: ["device": "\(name)"]) }
        return removed
    }

    /// Gives stored devices that have no client address the address `addresses` names for them
    /// (device name → address), in one transaction.
    ///
    /// Devices that already have an address keep it, and names that are not stored are skipped.
    /// - Returns: the names of the devices that got an address, sorted.
    /// - Throws: ``RegcodeStoreError/clientAddressInUse(address:device:)`` when an address is
    ///   another device's (stored, or given to another device in the same call); nothing is
    ///   written then.
    @discardableResult
    package func assignClientAddresses(_ addresses: [String: String]) async throws -> [String] {
        guard !addresses.isEmpty else { return [] }
        let assigned = try await pool.write { db -> [String] in
            var assigned: [String] = []
            var owners: [String: String] = [:]
            let update = try db.cachedStatement(sql: "UPDATE devices SET client_address = ? WHERE name = ? AND client_address IS NULL")
            for name in addresses.keys.sorted() {
                guard let address = addresses[name] else { continue }
                if let owner = owners[address] {
                    throw RegcodeStoreError.clientAddressInUse(address: address, device: owner)
                }
                owners[address] = name
                try Self.checkClientAddressIsFree(address, for: name, db: db)
                try update.execute(arguments: [address, name])
                if db.changesCount > 0 { assigned.append(name) }
            }
            return assigned
        }
        if !assigned.isEmpty {
            logger.debug("client addresses assigned", metadata: ["devices": "\(assigned.count)"])
        }
        return assigned
    }

    /// The client addresses in use: device name → address, for the stored devices that have one.
    package func clientAddresses() async throws -> [String: String] {
        try await pool.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT name, client_address FROM devices WHERE client_address IS NOT NULL")
            var addresses: [String: String] = [:]
            while let row = try rows.next() {
                addresses[row["name"]] = row["client_address"]
            }
            return addresses
        }
    }

    /// Throws when a device other than `name` has `address`.
    private static func checkClientAddressIsFree(_ address: String, for name: String, db: Database) throws {
        let owner = try String.fetchOne(
            db.cachedStatement(sql: "SELECT name FROM devices WHERE client_address = ? AND name <> ?"),
            arguments: [address, name]
        )
        if let owner {
            throw RegcodeStoreError.clientAddressInUse(address: address, device: owner)
        }
    }

    /// Every stored device as reports see it, oldest first: state, codes issued, client address.
    ///
    /// Works on a read-only store of an older schema version too (no address there).
    package func deviceRecordSummaries() async throws -> [DeviceRecordSummary] {
        let address = fileSchemaVersion >= 2 ? "d.client_address" : "NULL"
        return try await pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT d.name, d.state, d.fleet, d.created_at, \(address) AS client_address,
                           (SELECT count(*) FROM codes c WHERE c.device = d.name) AS codes_issued
                    FROM devices d
                    ORDER BY d.created_at, d.name
                    """
            )
            var summaries: [DeviceRecordSummary] = []
            while let row = try rows.next() {
                let name: String = row["name"]
                guard let state = DevicePhase(rawValue: row["state"]) else {
                    throw RegcodeStoreError.corruptRow(table: "devices", key: name, reason: "unknown state \(row["state"] as String)")
                }
                summaries.append(
                    DeviceRecordSummary(
                        name: name,
                        state: state,
                        fleet: row["fleet"],
                        createdEpochMs: row["created_at"],
                        codesIssued: row["codes_issued"],
                        clientAddress: row["client_address"]
                    )
                )
            }
            return summaries
        }
    }

    /// The stable device id of a stored device.
    package func deviceID(named name: String) async throws -> String? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT device_id FROM devices WHERE name = ?", arguments: [name])
        }
    }

    /// One overview line per device, oldest first: state, pending code, polls for that code and the
    /// latest poll.
    package func deviceSummaries() async throws -> [DeviceSummary] {
        try await pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: try Self.hasPollIndex(db) ? Self.summariesByIndex : Self.summariesByScan,
                arguments: [Self.pollTimeSlackMs]
            )
            var summaries: [DeviceSummary] = []
            while let row = try rows.next() { summaries.append(try Self.summary(row)) }
            return summaries
        }
    }

    /// The overview line of one device, as ``deviceSummaries()`` gives it; nil for an unknown device.
    ///
    /// Its two lookups take the index by device when there is one and the time index when there is not,
    /// which reads the log back to the device's latest poll and to the issue of its pending code.
    package func deviceSummary(named name: String) async throws -> DeviceSummary? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: Self.summaryOfOne, arguments: [Self.pollTimeSlackMs, name]).map(Self.summary)
        }
    }

    private static func summary(_ row: Row) throws -> DeviceSummary {
        let name: String = row["name"]
        guard let state = DevicePhase(rawValue: row["state"]) else {
            throw RegcodeStoreError.corruptRow(table: "devices", key: name, reason: "unknown state \(row["state"] as String)")
        }
        return DeviceSummary(
            name: name,
            state: state,
            pendingCode: row["code"],
            codeExpiresEpochMs: row["code_expires_at"],
            pollsForCode: row["polls_for_code"],
            lastHTTPStatus: row["last_http_status"],
            lastPollEpochMs: row["last_sent_at"],
            fleet: row["fleet"]
        )
    }

    /// The overview columns with two lookups per device, fast on the poll log's index by device. Polls for
    /// a code are sent after the code was stored; the lower bound on sent_at keeps the count on the index
    /// instead of the device's whole poll history. The slack covers the step time being taken slightly
    /// after a poll's send time.
    static let summaryByLookups = """
        SELECT d.name, d.state, d.fleet, c.code, c.expires_at AS code_expires_at,
               CASE WHEN c.code IS NULL THEN 0 ELSE
                   (SELECT count(*) FROM poll_attempts p
                    WHERE p.device = d.name AND p.sent_at >= c.issued_at - ?1 AND p.code = c.code)
               END AS polls_for_code,
               lp.http_status AS last_http_status, lp.sent_at AS last_sent_at
        FROM devices d
        LEFT JOIN codes c ON c.device = d.name AND c.status = 'pending'
        LEFT JOIN poll_attempts lp ON lp.id =
            (SELECT p.id FROM poll_attempts p WHERE p.device = d.name ORDER BY p.sent_at DESC, p.id DESC LIMIT 1)
        """
    static let summariesByIndex = summaryByLookups + "\nORDER BY d.created_at, d.name"
    static let summaryOfOne = summaryByLookups + "\nWHERE d.name = ?2"

    /// ``deviceSummaries()`` without that index (``PollIndex/none``): the same columns from one pass over
    /// the log, as a lookup per device would read the whole log each time. A device's polls are sent one
    /// after another, so its latest poll is its latest row.
    static let summariesByScan = """
        WITH pending AS (SELECT device, code, issued_at, expires_at FROM codes WHERE status = 'pending'),
             counts AS (
                 SELECT p.device, count(*) AS polls FROM poll_attempts p
                 JOIN pending c ON c.device = p.device AND c.code = p.code AND p.sent_at >= c.issued_at - ?1
                 WHERE p.sent_at >= (SELECT min(issued_at) FROM pending) - ?1
                 GROUP BY p.device),
             latest AS (SELECT device, max(id) AS id FROM poll_attempts GROUP BY device)
        SELECT d.name, d.state, d.fleet, c.code, c.expires_at AS code_expires_at,
               CASE WHEN c.code IS NULL THEN 0 ELSE coalesce(n.polls, 0) END AS polls_for_code,
               lp.http_status AS last_http_status, lp.sent_at AS last_sent_at
        FROM devices d
        LEFT JOIN pending c ON c.device = d.name
        LEFT JOIN counts n ON n.device = d.name
        LEFT JOIN latest l ON l.device = d.name
        LEFT JOIN poll_attempts lp ON lp.id = l.id
        ORDER BY d.created_at, d.name
        """

    static let pollTimeSlackMs: Int64 = 60_000

    static func wallClockMs() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
