import Foundation
import GRDB

extension RegcodeStore {
    /// The statements that turn a database of `version - 1` into `version`, keyed by `version`.
    ///
    /// Each runs inside the opening transaction, so a migration is all or nothing. A migrated file
    /// has the tables and indexes `schema.sql` creates, with the same text (new columns come last and
    /// their constraints are partial indexes, because ALTER TABLE can only add a plain column).
    static let migrations: [Int32: String] = [
        2: """
        ALTER TABLE devices ADD COLUMN client_address TEXT;
        CREATE UNIQUE INDEX devices_by_client_address ON devices(client_address) WHERE client_address IS NOT NULL;
        CREATE TABLE request_attempts (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            device          TEXT NOT NULL,
            stage           TEXT NOT NULL,                      -- registration, token, configuration, session, profile, decision, metadata, logout
            endpoint        TEXT NOT NULL,                      -- the endpoint's short name
            sent_at         INTEGER NOT NULL,
            http_status     INTEGER,                            -- NULL on transport errors
            latency_ms      REAL NOT NULL,
            outcome         TEXT NOT NULL,                      -- ok, throttled, server-error, transport-error, malformed, unauthorized, client-error, abandoned
            error_code      TEXT,                               -- Adobe's enhanced or DCR error code, when the answer carried one
            retry_delay_ms  INTEGER                             -- the wait before the same request was tried again; NULL: not retried
        );
        CREATE INDEX request_attempts_by_device ON request_attempts(device, sent_at);
        CREATE INDEX request_attempts_by_time ON request_attempts(sent_at);
        PRAGMA user_version = 2;
        """,
        3: """
        ALTER TABLE events ADD COLUMN app TEXT;
        -- Apps of devices that host several AccessEnabler apps (single sign-on). A device without an app
        -- list has none here: its one app is the device row itself. The first app (position 0) keeps its
        -- login state in the device's own rows; the others keep theirs here.
        CREATE TABLE apps (
            device          TEXT NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
            app             TEXT NOT NULL,                      -- the app's id on the device, as socket calls name it
            position        INTEGER NOT NULL,                   -- 0 = the device's first app
            bundle_id       TEXT NOT NULL,
            team_id         TEXT NOT NULL,
            requestor       TEXT NOT NULL,
            access_enabler  TEXT NOT NULL,                      -- AccessEnabler SDK version, e.g. 3.9.2
            install_source  TEXT NOT NULL CHECK (install_source IN ('appStore', 'xcode', 'adHoc', 'simulator')),
            vendor_generation INTEGER NOT NULL DEFAULT 0,       -- bumped when all of the app's vendor's apps were reinstalled (new IDFV)
            snapshot        TEXT,                               -- DeviceSnapshot JSON of apps other than the first; NULL for the first
            updated_at      INTEGER NOT NULL,
            PRIMARY KEY (device, app)
        );

        -- Authentication tokens as the devices' AccessEnablers keep them in their storage domains
        -- (pasteboard, NSUserDefaults, keychain), shared by the apps of a domain. Rewritten as a whole per
        -- device when one changes; position is the order lookups see them in.
        CREATE TABLE ae_tokens (
            device          TEXT NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
            position        INTEGER NOT NULL,
            domain          TEXT NOT NULL,                      -- global, team:T1, app:com.x.y.AppA, keychain:T1:v37
            bound_device_id TEXT NOT NULL,                      -- the AccessEnabler device id of the app that stored it
            requestor       TEXT NOT NULL,
            mvpd            TEXT NOT NULL,
            creator_app     TEXT NOT NULL,                      -- id of the app that stored it
            creator_bundle  TEXT NOT NULL,
            token_source    TEXT NOT NULL CHECK (token_source IN ('Adobe', 'Apple')),
            format          TEXT NOT NULL CHECK (format IN ('legacy', 'v30', 'v37')),
            user_id         TEXT,
            not_after       INTEGER NOT NULL,
            PRIMARY KEY (device, position)
        );

        -- The system TV Provider account of a device (Apple single sign-on); no row: signed out.
        CREATE TABLE tv_provider_accounts (
            device          TEXT PRIMARY KEY NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
            provider        TEXT NOT NULL,                      -- Apple provider id (an MVPD's platformMappingId)
            user_id         TEXT NOT NULL,
            household_id    TEXT,
            zip             TEXT,
            expires_at      INTEGER,                            -- authenticationExpirationDate; NULL: no expiry reported
            updated_at      INTEGER NOT NULL
        );

        -- Each app's TV Provider permission (Settings → TV Provider); app '*' holds the permission of apps
        -- without a row of their own. A device emulating a TV Provider always has the '*' row.
        CREATE TABLE tv_provider_access (
            device          TEXT NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
            app             TEXT NOT NULL,
            access          TEXT NOT NULL CHECK (access IN ('notDetermined', 'denied', 'restricted', 'granted')),
            PRIMARY KEY (device, app)
        );
        PRAGMA user_version = 3;
        """,
        4: """
        -- Settings a database is bound to, one row per key. 'shard' = 'K/N' when the daemon that created it ran
        -- shard K of N (--shard): its devices are that slice of the fleets, so a daemon started as another shard
        -- (or unsharded) refuses the file rather than dropping them. No row: an unsharded database.
        CREATE TABLE daemon_settings (
            key             TEXT PRIMARY KEY NOT NULL,
            value           TEXT NOT NULL
        );
        PRAGMA user_version = 4;
        """,
        5: """
        ALTER TABLE auth_profiles ADD COLUMN type TEXT NOT NULL DEFAULT 'regular';
        -- Every login (a profile the device newly holds), by kind, for soak reports. Kept when a device is
        -- removed (history; pruned by retention with the poll log).
        CREATE TABLE logins (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            device          TEXT NOT NULL,
            time            INTEGER NOT NULL,
            mvpd            TEXT NOT NULL,
            kind            TEXT NOT NULL                       -- regular, temppass, degraded, sso
        );
        CREATE INDEX logins_by_time ON logins(time);
        PRAGMA user_version = 5;
        """,
        6: """
        CREATE TABLE requests_in_flight (
            id              INTEGER PRIMARY KEY,                -- increasing: rows are added at the end and leave from the front
            device          TEXT NOT NULL,                      -- no foreign key: a removed device's row is dropped at start
            app             TEXT NOT NULL,                      -- the app's id on the device (main: the default app)
            stage           TEXT NOT NULL,                      -- as request_attempts.stage; poll for a poll
            endpoint        TEXT NOT NULL,
            code            TEXT,                               -- the polled code (polls only)
            planned_at      INTEGER,                            -- when the poll was planned (polls only)
            sent_at         INTEGER NOT NULL
        );
        PRAGMA user_version = 6;
        """,
        7: """
        ALTER TABLE devices ADD COLUMN oauth_state TEXT;
        PRAGMA user_version = 7;
        """,
    ]

    /// A copy of an older database (`source`, at `version`) migrated to ``schemaVersion``, for reading it with this
    /// build's queries while the file itself stays untouched. The copy is a temporary file, removed as soon as it is
    /// open (the one connection keeps it), so a large soak database never has to fit in memory.
    static func migratedCopy(of source: DatabaseQueue, from version: Int32) throws -> DatabaseQueue {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("regcoded-report-\(UUID().uuidString).sqlite").path
        var configuration = Configuration()
        configuration.label = "regcoded.store.migrated-copy"
        // A scratch copy: no journal file beside it, and nothing to recover after a crash.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = MEMORY") }
        let copy = try DatabaseQueue(path: path, configuration: configuration)
        defer { unlink(path) }
        try source.backup(to: copy)
        try copy.inTransaction {
            _ = try migrate($0, from: version)
            return .commit
        }
        return copy
    }

    /// The oldest schema version this build can migrate from.
    static let oldestMigratableVersion: Int32 = 1

    /// Brings a database of `version` up to ``schemaVersion`` inside the caller's transaction.
    /// - Returns: the versions it migrated through, e.g. `[2]`.
    static func migrate(_ db: Database, from version: Int32) throws -> [Int32] {
        var applied: [Int32] = []
        var current = version
        while current < schemaVersion {
            let next = current + 1
            guard let sql = migrations[next] else {
                preconditionFailure("no migration to schema version \(next)")
            }
            try db.execute(sql: sql)
            applied.append(next)
            current = next
        }
        return applied
    }
}
