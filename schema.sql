-- regcoded state database. This file is the schema: the daemon creates exactly this.
-- Times are milliseconds since the Unix epoch (UTC) unless a column says otherwise.

-- application_id marks the file as a regcoded database ('RGCD'); user_version is the schema
-- version the store checks on open: it migrates older versions it knows in place (versions 1 to 6: see
-- RegcodeStore+Migration.swift) and refuses versions it does not know.
PRAGMA application_id = 1380401988;
PRAGMA user_version = 7;

-- One row per emulated device; identity is stable across restarts.
CREATE TABLE devices (
    name            TEXT PRIMARY KEY NOT NULL,          -- fleet name, e.g. stb-1
    device_id       TEXT NOT NULL UNIQUE,               -- stable id sent as AP-Device-Identifier / deviceId
    device_info     TEXT NOT NULL,                      -- X-Device-Info JSON (decoded)
    profile         TEXT NOT NULL CHECK (profile IN ('v2', 'v1')),
    requestor       TEXT NOT NULL,
    scenario        TEXT NOT NULL,
    settings        TEXT NOT NULL,                      -- DeviceSettings JSON without secrets (no software statement, no signing keys)
    seed            INTEGER NOT NULL,                   -- jitter generator seed (UInt64 stored as its signed 64-bit bit pattern)
    fleet           TEXT,                               -- configured fleet the device belongs to / was modelled on
    added_at_runtime INTEGER NOT NULL DEFAULT 0 CHECK (added_at_runtime IN (0, 1)), -- 1: added over the control socket, kept although not configured
    selected_mvpd   TEXT,
    state           TEXT NOT NULL,                      -- new, configuring, ready, selecting-provider, requesting-code, polling, authenticated, failed
    mvpds           TEXT,                               -- requestor MVPD list JSON; NULL until setRequestor succeeded
    options         TEXT NOT NULL DEFAULT '{}',         -- setOptions values JSON (object of strings)
    renewals        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    client_address  TEXT,                               -- stable emulated client address, sent as X-Forwarded-For; NULL until the daemon assigns one
    oauth_state     TEXT                                -- OAuth device (RFC 8628): endpoints, the code polled, tokens (JSON); NULL for Adobe Pass devices
);
-- Last column and a partial index rather than a column constraint: a version-1 database gets both
-- with ALTER TABLE, so migrated and new files have the same columns in the same order.
CREATE UNIQUE INDEX devices_by_client_address ON devices(client_address) WHERE client_address IS NOT NULL;

-- DCR client credentials: registered once per device, kept indefinitely.
CREATE TABLE client_credentials (
    device          TEXT PRIMARY KEY NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
    client_id       TEXT NOT NULL,
    client_secret   TEXT NOT NULL,
    registered_at   INTEGER NOT NULL
);

-- DCR access tokens, refreshed with the stored credentials.
CREATE TABLE access_tokens (
    device          TEXT PRIMARY KEY NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
    token           TEXT NOT NULL,
    expires_at      INTEGER NOT NULL,
    obtained_at     INTEGER NOT NULL
);

-- Second-screen codes; at most one pending per device.
CREATE TABLE codes (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    device          TEXT NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
    code            TEXT NOT NULL,
    mvpd            TEXT,
    issued_at       INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'authenticated', 'expired', 'replaced', 'cancelled')),
    ended_at        INTEGER,
    CHECK ((status = 'pending') = (ended_at IS NULL))   -- only a finished code has an end time
);
CREATE INDEX codes_by_device ON codes(device, status);
CREATE UNIQUE INDEX codes_one_pending ON codes(device) WHERE status = 'pending';

-- Authentication profiles (v2) / AuthN tokens (v1).
CREATE TABLE auth_profiles (
    device          TEXT PRIMARY KEY NOT NULL REFERENCES devices(name) ON DELETE CASCADE,
    mvpd            TEXT NOT NULL,
    user_id         TEXT,
    expires_at      INTEGER NOT NULL,
    authenticated_at INTEGER NOT NULL,
    type            TEXT NOT NULL DEFAULT 'regular'     -- the profile's type: regular, temporary, degraded, appleSSO, platformSSO, serviceTokenSSO
);

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

-- Every poll attempt, for soak reports. Kept when a device is removed (history; pruned by retention).
CREATE TABLE poll_attempts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    device          TEXT NOT NULL,
    code            TEXT NOT NULL,
    planned_at      INTEGER NOT NULL,
    sent_at         INTEGER NOT NULL,
    http_status     INTEGER,
    latency_ms      REAL NOT NULL,
    outcome         TEXT NOT NULL,                      -- pending, authenticated, throttled, server-error, transport-error, malformed, unauthorized, code-invalid, client-error, abandoned
    next_delay_ms   INTEGER
);
CREATE INDEX poll_attempts_by_device ON poll_attempts(device, sent_at);
CREATE INDEX poll_attempts_by_time ON poll_attempts(sent_at);

-- Every backend request other than a poll (registration, token, configuration, session, …), each
-- retry its own row, for soak reports: failed onboardings, re-registrations, 429s and 5xx by stage.
-- Kept when a device is removed and pruned by retention, like poll_attempts.
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

-- Backend requests in flight, each written before it is sent (or queued to be) and deleted with its
-- answer's records (write-ahead). A row found at start is a request whose answer the daemon never
-- received (it was killed): it goes to poll_attempts or request_attempts as `interrupted`.
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

-- Callbacks delivered to socket subscribers; seq is gap-free and never reused (AUTOINCREMENT keeps
-- it growing after pruning). Kept when a device is removed, like poll_attempts.
CREATE TABLE events (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    device          TEXT NOT NULL,
    time            INTEGER NOT NULL,
    name            TEXT NOT NULL,
    args            TEXT NOT NULL,                      -- compact JSON object, keys sorted
    app             TEXT                                -- the device's app that fired it; NULL: the default app, main
);
CREATE INDEX events_by_device ON events(device, seq);
CREATE INDEX events_by_time ON events(time);

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

-- Settings a database is bound to, one row per key. 'shard' = 'K/N' when the daemon that created it ran
-- shard K of N (--shard): its devices are that slice of the fleets, so a daemon started as another shard
-- (or unsharded) refuses the file rather than dropping them. No row: an unsharded database.
CREATE TABLE daemon_settings (
    key             TEXT PRIMARY KEY NOT NULL,
    value           TEXT NOT NULL
);
