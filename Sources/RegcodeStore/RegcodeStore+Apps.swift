import Foundation
import GRDB
import RegcodeEngine

/// The apps of devices that host several, and their shared token storage (single sign-on).
extension RegcodeStore {
    /// Apps per device, in position order.
    static func loadApps(_ db: Database, json: JSONColumns, device only: String? = nil) throws -> [String: [StoredApp]] {
        var apps: [String: [StoredApp]] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT device, app, bundle_id, team_id, requestor, access_enabler, install_source, vendor_generation, snapshot
                FROM apps \(only == nil ? "" : "WHERE device = ?") ORDER BY device, position
                """,
            arguments: StatementArguments(only.map { [$0] } ?? [])
        )
        while let row = try rows.next() {
            let device: String = row["device"]
            let id: String = row["app"]
            let key = "\(device)/\(id)"
            guard let version = SemanticVersion(row["access_enabler"] as String) else {
                throw RegcodeStoreError.corruptRow(table: "apps", key: key, reason: "bad AccessEnabler version")
            }
            guard let source = InstallSource(rawValue: row["install_source"]) else {
                throw RegcodeStoreError.corruptRow(table: "apps", key: key, reason: "unknown install source")
            }
            let identity = AppIdentity(
                bundleId: row["bundle_id"],
                teamId: row["team_id"],
                requestor: row["requestor"],
                accessEnabler: version,
                installSource: source,
                vendorGeneration: row["vendor_generation"]
            )
            var snapshot: DeviceSnapshot?
            if let text: String = row["snapshot"] {
                snapshot = try json.value(DeviceSnapshot.self, from: text, table: "apps", key: key)
            }
            apps[device, default: []].append(StoredApp(app: HostedApp(id: id, identity: identity), snapshot: snapshot))
        }
        return apps
    }

    /// Shared tokens per device (of one device when `device` is given), in lookup order.
    static func loadTokens(_ db: Database, device only: String? = nil) throws -> [String: [SharedToken]] {
        var tokens: [String: [SharedToken]] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT device, position, domain, bound_device_id, requestor, mvpd, creator_app, creator_bundle, token_source,
                       format, user_id, not_after
                FROM ae_tokens \(only == nil ? "" : "WHERE device = ?") ORDER BY device, position
                """,
            arguments: StatementArguments(only.map { [$0] } ?? [])
        )
        while let row = try rows.next() {
            let device: String = row["device"]
            let key = "\(device)/\(row["position"] as Int64)"
            guard let domain = StorageDomain(key: row["domain"]) else {
                throw RegcodeStoreError.corruptRow(table: "ae_tokens", key: key, reason: "unknown domain")
            }
            guard let format = TokenFormatGeneration(rawValue: row["format"]), let source = TokenSource(rawValue: row["token_source"]) else {
                throw RegcodeStoreError.corruptRow(table: "ae_tokens", key: key, reason: "unknown format or source")
            }
            let profile = AuthProfile(mvpd: row["mvpd"], userID: row["user_id"], expiresEpochMs: row["not_after"])
            let metadata = StoredToken(
                domain: domain,
                boundDeviceId: row["bound_device_id"],
                requestor: row["requestor"],
                mvpd: profile.mvpd,
                creatorApp: row["creator_bundle"],
                notAfter: profile.expiresEpochMs,
                formatGeneration: format
            )
            tokens[device, default: []].append(SharedToken(metadata: metadata, profile: profile, creatorAppID: row["creator_app"], source: source))
        }
        return tokens
    }

    /// Replaces a device's app rows (the first app's state stays in the device row).
    static func writeApps(_ apps: [StoredApp], device: String, at time: Int64, json: JSONColumns, db: Database) throws {
        try db.execute(sql: "DELETE FROM apps WHERE device = ?", arguments: [device])
        for (position, app) in apps.enumerated() {
            let identity = app.app.identity
            try db.execute(
                sql: """
                    INSERT INTO apps (device, app, position, bundle_id, team_id, requestor, access_enabler, install_source,
                                      vendor_generation, snapshot, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    device, app.app.id, position, identity.bundleId, identity.teamId, identity.requestor,
                    identity.accessEnabler.description, identity.installSource.rawValue, identity.vendorGeneration,
                    try app.snapshot.map { try json.text($0) }, time,
                ]
            )
        }
    }

    /// Writes the state of an app other than a device's first. Returns `false` when it is not stored.
    static func writeAppSnapshot(
        _ snapshot: DeviceSnapshot,
        device: String,
        app: String,
        at time: Int64,
        json: JSONColumns,
        db: Database
    ) throws -> Bool {
        try db.cachedStatement(sql: "UPDATE apps SET snapshot = ?, updated_at = ? WHERE device = ? AND app = ?")
            .execute(arguments: [try json.text(snapshot), time, device, app])
        return db.changesCount > 0
    }

    /// Replaces a device's shared token storage with `tokens` (a handful per device at most).
    static func writeTokens(_ tokens: [SharedToken], device: String, db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM devices WHERE name = ?", arguments: [device]) == true else { return }
        try db.cachedStatement(sql: "DELETE FROM ae_tokens WHERE device = ?").execute(arguments: [device])
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO ae_tokens (device, position, domain, bound_device_id, requestor, mvpd, creator_app, creator_bundle,
                                       token_source, format, user_id, not_after)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        for (position, token) in tokens.enumerated() {
            let metadata = token.metadata
            try insert.execute(arguments: [
                device, position, metadata.domain.key, metadata.boundDeviceId, metadata.requestor, metadata.mvpd,
                token.creatorAppID, metadata.creatorApp, token.source.rawValue, metadata.formatGeneration.rawValue,
                token.profile.userID, metadata.notAfter,
            ])
        }
    }

    /// The token storage of one device, as stored (for `storage.list`).
    package func tokens(of device: String) async throws -> [SharedToken] {
        try await pool.read { db in try Self.loadTokens(db, device: device)[device] ?? [] }
    }
}
