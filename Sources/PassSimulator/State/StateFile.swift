import GRDB
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the state file cannot be used.
package enum SimulatorStateError: Error, Sendable, CustomStringConvertible {
    /// The file exists but is not a pass-sim state file; it was left untouched.
    case notAStateFile(path: String, reason: String)
    /// The file was written by a newer pass-sim; it was left untouched.
    case unsupportedVersion(path: String, found: Int32, supported: Int32)
    /// The file could not be created, opened, read or written.
    case cannotOpen(path: String, reason: String)

    package var description: String {
        switch self {
        case .notAStateFile(let path, let reason):
            "\(path) is not a pass-sim state file (\(reason)); it was left untouched"
        case .unsupportedVersion(let path, let found, let supported):
            "\(path) has state format version \(found); this pass-sim reads version \(supported); it was left untouched"
        case .cannotOpen(let path, let reason):
            "cannot use the state file \(path): \(reason)"
        }
    }
}

/// The simulator's SQLite state file (GRDB on the system libsqlite3, WAL).
///
/// One table per kind of durable record, each row a key and its record as JSON. The file is created with mode
/// 0600 (SQLite gives `-wal`/`-shm` the same mode) and marked with its own `application_id` and `user_version`; any
/// other non-empty file is refused before SQLite opens it, so a foreign file is never modified.
final class StateFile: Sendable {
    /// `PRAGMA application_id` of a state file ('PSIM').
    static let applicationID: Int32 = 0x5053_494D
    /// `PRAGMA user_version`: the format this build reads and writes.
    static let formatVersion: Int32 = 1

    static let schema = """
        CREATE TABLE client (client_id TEXT PRIMARY KEY NOT NULL, body TEXT NOT NULL);
        CREATE TABLE access_token (access_token TEXT PRIMARY KEY NOT NULL, client_id TEXT NOT NULL, expires_at INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE TABLE code (code TEXT PRIMARY KEY NOT NULL, api TEXT NOT NULL, service_provider TEXT NOT NULL, device_identifier TEXT NOT NULL, body TEXT NOT NULL);
        CREATE TABLE profile (service_provider TEXT NOT NULL, device_identifier TEXT NOT NULL, client_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (service_provider, device_identifier, client_id));
        CREATE TABLE v1_authn_token (requestor TEXT NOT NULL, device_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (requestor, device_id));
        CREATE TABLE v1_authorization (requestor TEXT NOT NULL, device_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (requestor, device_id));
        CREATE TABLE deny_lists (id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1), body TEXT NOT NULL);
        """

    /// Tables added after format version 1 shipped; created when missing, so older files are upgraded in place
    /// (purely additive, hence no version bump).
    static let additions = """
        CREATE TABLE IF NOT EXISTS sso_record (kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, key));
        """

    let path: String
    private let queue: DatabaseQueue

    private init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
    }

    /// Opens the state file at `path`, creating it when missing or empty.
    static func prepare(path: String, logger: Logger) async throws(SimulatorStateError) -> StateFile {
        let isNew = try self.checkOrCreate(path)
        var configuration = Configuration()
        configuration.label = "pass-sim.state"
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // With WAL, NORMAL loses nothing when the process is killed; only a power loss may take the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            let created = try await queue.write { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                guard applicationID == 0 && objects == 0 else { return false }
                try db.execute(sql: Self.schema)
                try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)")
                try db.execute(sql: "PRAGMA user_version = \(Self.formatVersion)")
                try db.execute(sql: Self.additions)
                return true
            }
            try await queue.write { db in try db.execute(sql: Self.additions) }
            if created {
                // The marks live in the first page; copy it from the WAL into the file itself, so the header check of
                // the next start sees them even if this process is killed before SQLite checkpoints on its own.
                _ = try await queue.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            }
        } catch {
            throw .cannotOpen(path: path, reason: Self.describe(error))
        }
        logger.info(isNew ? "state file created" : "state file opened", metadata: ["sim.state.path": .string(path)])
        return StateFile(path: path, queue: queue)
    }

    /// Creates a missing file with mode 0600, or checks from its header that an existing one is a state file this
    /// build reads, without letting SQLite touch it; returns whether the file is new (missing or empty).
    private static func checkOrCreate(_ path: String) throws(SimulatorStateError) -> Bool {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            // A restrictive umask must not leave the owner without write access.
            _ = fchmod(fd, 0o600)
            close(fd)
            return true
        }
        guard errno == EEXIST else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(reader) }
        var header = [UInt8](repeating: 0, count: 100)
        var count = 0
        while count < header.count {
            let received = header.withUnsafeMutableBytes { buffer -> Int in
                read(reader, buffer.baseAddress! + count, buffer.count - count)
            }
            if received <= 0 { break }
            count += received
        }
        header.removeLast(header.count - count)
        if header.isEmpty { return true }
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw .notAStateFile(path: path, reason: "not an SQLite database")
        }
        func integer(at offset: Int) -> Int32 {
            Int32(bitPattern: header[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        let applicationID = integer(at: 68)
        let version = integer(at: 60)
        guard applicationID == Self.applicationID else {
            throw .notAStateFile(path: path, reason: "application_id is \(applicationID), expected \(Self.applicationID)")
        }
        guard version == Self.formatVersion else {
            throw .unsupportedVersion(path: path, found: version, supported: Self.formatVersion)
        }
        return false
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "SQLite error \(error.resultCode)"
        }
        return String(describing: error)
    }

    // MARK: Writing

    /// Applies `changes` in order, in one transaction.
    func apply(_ changes: [StateChange]) async throws {
        try await self.queue.write { db in
            // Foundation's coders stay: rows are the state's `Codable` records, and old state files must keep loading.
            let encoder = JSONEncoder()
            let json: JSONText = { value in String(decoding: try encoder.encode(value), as: UTF8.self) }
            for change in changes {
                try Self.write(change, db: db, json: json)
            }
        }
    }

    /// A value's stored JSON text.
    private typealias JSONText = (any Encodable) throws -> String

    /// One change to its table; single sign-on records go to `sso_record`.
    private static func write(_ change: StateChange, db: Database, json: JSONText) throws {
        switch change {
        case .client(let id, let client?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO client (client_id, body) VALUES (?, ?)",
                arguments: [id, try json(StoredClient(client))]
            )
        case .client(let id, nil):
            try db.execute(sql: "DELETE FROM client WHERE client_id = ?", arguments: [id])
        case .accessToken(let token, let grant?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO access_token (access_token, client_id, expires_at, body) VALUES (?, ?, ?, ?)",
                arguments: [token, grant.clientId, grant.expiresAt, try json(grant)]
            )
        case .accessToken(let token, nil):
            try db.execute(sql: "DELETE FROM access_token WHERE access_token = ?", arguments: [token])
        case .session(let code, let session?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO code (code, api, service_provider, device_identifier, body) VALUES (?, ?, ?, ?, ?)",
                arguments: [code, session.api.rawValue, session.serviceProvider, session.deviceIdentifier, try json(StoredSession(session))]
            )
        case .session(let code, nil):
            try db.execute(sql: "DELETE FROM code WHERE code = ?", arguments: [code])
        case .profiles(let key, let profiles?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO profile (service_provider, device_identifier, client_id, body) VALUES (?, ?, ?, ?)",
                arguments: [key.serviceProvider, key.deviceIdentifier, key.clientId, try json(profiles)]
            )
        case .profiles(let key, nil):
            try db.execute(
                sql: "DELETE FROM profile WHERE service_provider = ? AND device_identifier = ? AND client_id = ?",
                arguments: [key.serviceProvider, key.deviceIdentifier, key.clientId]
            )
        case .v1Token(let key, let token?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO v1_authn_token (requestor, device_id, body) VALUES (?, ?, ?)",
                arguments: [key.serviceProvider, key.deviceIdentifier, try json(token)]
            )
        case .v1Token(let key, nil):
            try db.execute(
                sql: "DELETE FROM v1_authn_token WHERE requestor = ? AND device_id = ?",
                arguments: [key.serviceProvider, key.deviceIdentifier]
            )
        case .v1Authorizations(let key, let grants?):
            try db.execute(
                sql: "INSERT OR REPLACE INTO v1_authorization (requestor, device_id, body) VALUES (?, ?, ?)",
                arguments: [key.serviceProvider, key.deviceIdentifier, try json(grants)]
            )
        case .v1Authorizations(let key, nil):
            try db.execute(
                sql: "DELETE FROM v1_authorization WHERE requestor = ? AND device_id = ?",
                arguments: [key.serviceProvider, key.deviceIdentifier]
            )
        case .denyLists(let lists):
            try db.execute(sql: "INSERT OR REPLACE INTO deny_lists (id, body) VALUES (1, ?)", arguments: [try json(lists)])
        case .ssoLinks, .partnerRequest, .ssoSecret, .mvpdPlatform, .integration, .ssoServiceDevices, .ssoServiceLinkCode:
            try Self.writeSSORecord(change, db: db, json: json)
        }
    }

    /// A single sign-on change as an `sso_record` row (kind, key, body), deleted when its value is nil.
    private static func writeSSORecord(_ change: StateChange, db: Database, json: JSONText) throws {
        func put(_ kind: SSORecordKind, key: String, body: String?) throws {
            if let body {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sso_record (kind, key, body) VALUES (?, ?, ?)",
                    arguments: [kind.rawValue, key, body]
                )
            } else {
                try db.execute(sql: "DELETE FROM sso_record WHERE kind = ? AND key = ?", arguments: [kind.rawValue, key])
            }
        }
        switch change {
        case .ssoLinks(let subject, let links):
            try put(.link, key: try json(subject), body: try links.map { try json(StoredLinks(subject: subject, links: $0)) })
        case .partnerRequest(let id, let request):
            try put(.partnerRequest, key: id, body: try request.map { try json($0) })
        case .ssoSecret(let name, let value):
            try put(.secret, key: name.rawValue, body: try value.map { try json($0) })
        case .mvpdPlatform(let mvpd, let platform):
            try put(.mvpdPlatform, key: mvpd, body: try platform.map { try json(StoredPlatform(mvpd: mvpd, platform: $0)) })
        case .integration(let key, let settings):
            try put(.integration, key: try json(key), body: try settings.map { try json(StoredIntegration(key: key, settings: $0)) })
        case .ssoServiceDevices(let commonId, let devices):
            try put(.ssoServiceDevices, key: commonId, body: try devices.map { try json(StoredServiceDevices(commonId: commonId, devices: $0)) })
        case .ssoServiceLinkCode(let code, let link):
            try put(.ssoServiceLinkCode, key: code, body: try link.map { try json($0) })
        default:
            // Not a single sign-on record: `write` stores it.
            return
        }
    }

    // MARK: Reading

    /// Everything the file holds.
    struct Snapshot: Sendable {
        var clients: [RegisteredClient] = []
        var tokens: [AccessTokenGrant] = []
        var sessions: [AuthenticationSession] = []
        var profiles: [(SimulatorState.ProfileKey, [String: SimulatedProfile])] = []
        var v1Tokens: [(SimulatorState.DeviceKey, SimulatedProfile)] = []
        var v1Authorizations: [(SimulatorState.DeviceKey, [String: AuthorizationGrant])] = []
        var denyLists: DenyLists?
        var ssoLinks: [(SSOSubject, [String: SSOLink])] = []
        var partnerRequests: [PartnerRequest] = []
        var ssoSecrets: [(SSOSecret, String)] = []
        var mvpdPlatforms: [(String, MVPDPlatform)] = []
        var integrations: [(IntegrationKey, IntegrationSettings)] = []
        var ssoServiceDevices: [(String, [String: SSOServiceDevice])] = []
        var ssoServiceLinkCodes: [SSOServiceLinkCode] = []
    }

    func load() async throws(SimulatorStateError) -> Snapshot {
        do {
            return try await self.queue.read { db in
                // Foundation's coders stay: rows are the state's `Codable` records, and old state files must keep loading.
                let decoder = JSONDecoder()
                func decode<T: Decodable>(_ type: T.Type, _ row: Row) throws -> T {
                    let body: String = row["body"]
                    return try decoder.decode(type, from: Data(body.utf8))
                }
                var snapshot = Snapshot()
                for row in try Row.fetchAll(db, sql: "SELECT body FROM client") {
                    snapshot.clients.append(try decode(StoredClient.self, row).client)
                }
                for row in try Row.fetchAll(db, sql: "SELECT body FROM access_token") {
                    snapshot.tokens.append(try decode(AccessTokenGrant.self, row))
                }
                for row in try Row.fetchAll(db, sql: "SELECT body FROM code") {
                    snapshot.sessions.append(try decode(StoredSession.self, row).session)
                }
                for row in try Row.fetchAll(db, sql: "SELECT service_provider, device_identifier, client_id, body FROM profile") {
                    let key = SimulatorState.ProfileKey(
                        serviceProvider: row["service_provider"],
                        deviceIdentifier: row["device_identifier"],
                        clientId: row["client_id"]
                    )
                    snapshot.profiles.append((key, try decode([String: SimulatedProfile].self, row)))
                }
                for row in try Row.fetchAll(db, sql: "SELECT requestor, device_id, body FROM v1_authn_token") {
                    let key = SimulatorState.DeviceKey(serviceProvider: row["requestor"], deviceIdentifier: row["device_id"])
                    snapshot.v1Tokens.append((key, try decode(SimulatedProfile.self, row)))
                }
                for row in try Row.fetchAll(db, sql: "SELECT requestor, device_id, body FROM v1_authorization") {
                    let key = SimulatorState.DeviceKey(serviceProvider: row["requestor"], deviceIdentifier: row["device_id"])
                    snapshot.v1Authorizations.append((key, try decode([String: AuthorizationGrant].self, row)))
                }
                if let row = try Row.fetchOne(db, sql: "SELECT body FROM deny_lists WHERE id = 1") {
                    snapshot.denyLists = try decode(DenyLists.self, row)
                }
                for row in try Row.fetchAll(db, sql: "SELECT kind, key, body FROM sso_record") {
                    let kind: String = row["kind"]
                    switch SSORecordKind(rawValue: kind) {
                    case .link?:
                        let stored = try decode(StoredLinks.self, row)
                        snapshot.ssoLinks.append((stored.subject, stored.links))
                    case .partnerRequest?:
                        snapshot.partnerRequests.append(try decode(PartnerRequest.self, row))
                    case .secret?:
                        if let name = SSOSecret(rawValue: row["key"]) { snapshot.ssoSecrets.append((name, try decode(String.self, row))) }
                    case .mvpdPlatform?:
                        let stored = try decode(StoredPlatform.self, row)
                        snapshot.mvpdPlatforms.append((stored.mvpd, stored.platform))
                    case .integration?:
                        let stored = try decode(StoredIntegration.self, row)
                        snapshot.integrations.append((stored.key, stored.settings))
                    case .ssoServiceDevices?:
                        let stored = try decode(StoredServiceDevices.self, row)
                        snapshot.ssoServiceDevices.append((stored.commonId, stored.devices))
                    case .ssoServiceLinkCode?:
                        snapshot.ssoServiceLinkCodes.append(try decode(SSOServiceLinkCode.self, row))
                    case nil:
                        // A kind written by a newer build: skipped, and left in the file.
                        continue
                    }
                }
                return snapshot
            }
        } catch {
            throw .cannotOpen(path: self.path, reason: Self.describe(error))
        }
    }
}

/// A ``RegisteredClient`` as the state file keeps it (the secret included: the file is private to its owner).
private struct StoredClient: Codable {
    var clientId: String
    var clientSecret: String
    var softwareId: String
    var redirectURIs: [String]
    var issuedAtSeconds: Int64

    init(_ client: RegisteredClient) {
        self.clientId = client.clientId
        self.clientSecret = client.clientSecret
        self.softwareId = client.softwareId
        self.redirectURIs = client.redirectURIs
        self.issuedAtSeconds = client.issuedAtSeconds
    }

    var client: RegisteredClient {
        RegisteredClient(
            clientId: self.clientId,
            clientSecret: self.clientSecret,
            softwareId: self.softwareId,
            redirectURIs: self.redirectURIs,
            issuedAtSeconds: self.issuedAtSeconds
        )
    }
}

/// An ``AuthenticationSession`` as the state file keeps it: its status, script, cutoff and creating device.
private struct StoredSession: Codable {
    var code: String
    var api: CodeAPI
    var sessionId: String
    var serviceProvider: String
    var deviceIdentifier: String
    var clientId: String
    var mvpd: String?
    var domainName: String?
    var redirectUrl: String?
    var notBefore: Int64
    var notAfter: Int64
    var status: String
    var profile: SimulatedProfile?
    var script: CodeScript?
    var scriptDueAt: Int64?
    var cutoffAt: Int64?
    var cutoffReason: AuthenticationSession.Cutoff?
    var deviceInfo: [String: String]?
    var userAgent: String?
    var peerAddress: String?
    var v1Info: V1RegcodeInfo?
    var ssoSubjects: [SSOSubject]?

    init(_ session: AuthenticationSession) {
        self.code = session.code
        self.api = session.api
        self.sessionId = session.sessionId
        self.serviceProvider = session.serviceProvider
        self.deviceIdentifier = session.deviceIdentifier
        self.clientId = session.clientId
        self.mvpd = session.mvpd
        self.domainName = session.domainName
        self.redirectUrl = session.redirectUrl
        self.notBefore = session.notBefore
        self.notAfter = session.notAfter
        switch session.status {
        case .pending: self.status = "pending"
        case .completed(let profile):
            self.status = "completed"
            self.profile = profile
        case .expired: self.status = "expired"
        case .superseded: self.status = "superseded"
        }
        self.script = session.script
        self.scriptDueAt = session.scriptDueAt
        self.cutoffAt = session.cutoff?.at
        self.cutoffReason = session.cutoff?.reason
        self.deviceInfo = session.deviceInfo?.fields
        self.userAgent = session.userAgent
        self.peerAddress = session.peerAddress
        self.v1Info = session.v1Info
        self.ssoSubjects = session.ssoSubjects.isEmpty ? nil : session.ssoSubjects
    }

    var session: AuthenticationSession {
        let status: AuthenticationSession.Status =
            switch (self.status, self.profile) {
            case ("completed", let profile?): .completed(profile)
            case ("expired", _): .expired
            case ("superseded", _): .superseded
            default: .pending
            }
        var cutoff: (at: Int64, reason: AuthenticationSession.Cutoff)?
        if let at = self.cutoffAt, let reason = self.cutoffReason { cutoff = (at, reason) }
        return AuthenticationSession(
            code: self.code,
            api: self.api,
            sessionId: self.sessionId,
            serviceProvider: self.serviceProvider,
            deviceIdentifier: self.deviceIdentifier,
            clientId: self.clientId,
            mvpd: self.mvpd,
            domainName: self.domainName,
            redirectUrl: self.redirectUrl,
            notBefore: self.notBefore,
            notAfter: self.notAfter,
            status: status,
            script: self.script,
            scriptDueAt: self.scriptDueAt,
            cutoff: cutoff,
            deviceInfo: self.deviceInfo.map { DeviceInfo(fields: $0) },
            userAgent: self.userAgent,
            peerAddress: self.peerAddress,
            v1Info: self.v1Info,
            ssoSubjects: self.ssoSubjects ?? []
        )
    }
}

/// The kinds of single sign-on records kept in the `sso_record` table.
private enum SSORecordKind: String {
    case link
    case partnerRequest = "partner_request"
    case secret
    case mvpdPlatform = "mvpd_platform"
    case integration
    case ssoServiceDevices = "sso_service_devices"
    case ssoServiceLinkCode = "sso_service_link_code"
}

/// A subject's links with the subject itself, so a row is self-describing.
private struct StoredLinks: Codable {
    var subject: SSOSubject
    var links: [String: SSOLink]
}

private struct StoredPlatform: Codable {
    var mvpd: String
    var platform: MVPDPlatform
}

/// A common identifier's enrolled devices with the identifier itself.
private struct StoredServiceDevices: Codable {
    var commonId: String
    var devices: [String: SSOServiceDevice]
}

private struct StoredIntegration: Codable {
    var key: IntegrationKey
    var settings: IntegrationSettings
}
