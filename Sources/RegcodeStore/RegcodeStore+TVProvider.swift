import Foundation
import GRDB
import RegcodeEngine

/// Devices' TV Provider accounts and app permissions (Apple single sign-on).
extension RegcodeStore {
    static let defaultAccessRow = "*"

    static func loadTVProviders(_ db: Database, device only: String? = nil) throws -> [String: TVProviderDevice] {
        var devices: [String: TVProviderDevice] = [:]
        let access = try Row.fetchCursor(
            db,
            sql: "SELECT device, app, access FROM tv_provider_access \(only == nil ? "" : "WHERE device = ?") ORDER BY device, app",
            arguments: StatementArguments(only.map { [$0] } ?? [])
        )
        while let row = try access.next() {
            let device: String = row["device"]
            guard let value = TVProviderAccess(rawValue: row["access"]) else {
                throw RegcodeStoreError.corruptRow(table: "tv_provider_access", key: device, reason: "unknown access")
            }
            let app: String = row["app"]
            if app == defaultAccessRow {
                devices[device, default: TVProviderDevice()].defaultAccess = value
            } else {
                devices[device, default: TVProviderDevice()].access[app] = value
            }
        }
        let accounts = try Row.fetchCursor(
            db,
            sql: "SELECT device, provider, user_id, household_id, zip, expires_at FROM tv_provider_accounts \(only == nil ? "" : "WHERE device = ?")",
            arguments: StatementArguments(only.map { [$0] } ?? [])
        )
        while let row = try accounts.next() {
            let device: String = row["device"]
            // An account without the '*' row belongs to no emulated TV Provider (not written that way).
            guard devices[device] != nil else { continue }
            devices[device]?.account = TVProviderAccount(
                providerID: row["provider"],
                user: TVProviderUser(userID: row["user_id"], householdID: row["household_id"], zip: row["zip"]),
                expiresEpochMs: row["expires_at"] ?? Int64.max
            )
        }
        return devices
    }

    static func writeTVProvider(_ state: TVProviderDevice?, device: String, at time: Int64, db: Database) throws {
        try db.execute(sql: "DELETE FROM tv_provider_accounts WHERE device = ?", arguments: [device])
        try db.execute(sql: "DELETE FROM tv_provider_access WHERE device = ?", arguments: [device])
        guard let state else { return }
        let insertAccess = "INSERT INTO tv_provider_access (device, app, access) VALUES (?, ?, ?)"
        try db.execute(sql: insertAccess, arguments: [device, defaultAccessRow, state.defaultAccess.rawValue])
        for (app, access) in state.access.sorted(by: { $0.key < $1.key }) {
            try db.execute(sql: insertAccess, arguments: [device, app, access.rawValue])
        }
        guard let provider = state.account.providerID else { return }
        let user = state.account.user ?? TVProviderUser(userID: "tv-provider-user")
        try db.execute(
            sql: """
                INSERT INTO tv_provider_accounts (device, provider, user_id, household_id, zip, expires_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                device, provider, user.userID, user.householdID, user.zip,
                state.account.expiresEpochMs == Int64.max ? nil : state.account.expiresEpochMs, time,
            ]
        )
    }

    /// Stores a device's TV Provider after the lab changed it.
    package func saveTVProvider(_ state: TVProviderDevice?, device: String) async throws {
        let now = Self.wallClockMs()
        try await pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM devices WHERE name = ?", arguments: [device]) == true else { return }
            try Self.writeTVProvider(state, device: device, at: now, db: db)
        }
    }
}
