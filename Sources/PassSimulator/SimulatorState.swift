#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client application registered through DCR (`POST /o/client/register`).
public struct RegisteredClient: Sendable {
    /// The issued `client_id`.
    public let clientId: String
    /// The issued `client_secret`; never logged.
    let clientSecret: String
    /// `software_id` of the software statement the client registered with.
    public let softwareId: String
    /// Redirect URIs echoed in the registration answer.
    public let redirectURIs: [String]
    /// `client_id_issued_at`, in epoch seconds.
    public let issuedAtSeconds: Int64
}

/// An access token issued by `POST /o/client/token`.
struct AccessTokenGrant: Sendable {
    let id: String
    let accessToken: String
    let clientId: String
    let createdAt: Int64
    let expiresAt: Int64
}

/// An authenticated profile, created when a code completes (reference §7.6).
public struct SimulatedProfile: Sendable, Equatable, Codable {
    /// The MVPD that authenticated the user (also the profile's `issuer`).
    public let mvpd: String
    /// The `userID` attribute.
    public let userId: String
    /// The `householdID` attribute.
    public let householdId: String
    /// Start of validity, epoch milliseconds.
    public let notBefore: Int64
    /// End of validity, epoch milliseconds.
    public let notAfter: Int64
    /// Id of the authentication session that created the profile.
    public let sessionId: String
    /// User metadata by name (`userID`, `householdID`, `zip`, `maxRating`, `channelID`, `encryptedZip`, …).
    public let attributes: [String: ProfileAttribute]
}

/// Which API generation a code belongs to: v2 sessions and v1 registration codes live side by side but are not
/// visible to each other's endpoints.
public enum CodeAPI: String, Sendable, Equatable, Codable {
    /// `POST /api/v2/{sp}/sessions`.
    case v2
    /// `POST /reggie/v1/{requestor}/regcode`.
    case v1
}

/// The optional client fields a v1 registration code echoes in `info` (reference §4.1).
struct V1RegcodeInfo: Sendable, Equatable {
    var deviceType: String?
    var deviceUser: String?
    var appId: String?
    var appVersion: String?
    var registrationURL: String?
}

/// An authorization granted by v1 `authorize` (the "AuthZ token"), per resource.
struct AuthorizationGrant: Sendable, Equatable {
    let resource: String
    let mvpd: String
    let notBefore: Int64
    let notAfter: Int64
}

/// An authentication session and its code, as the simulator holds it.
public struct AuthenticationSession: Sendable {
    /// The state of a session at a given time.
    public enum Status: Sendable, Equatable {
        /// Waiting for the user to log in on a second screen.
        case pending
        /// Logged in; the profile stays retrievable by code until the code's `notAfter`.
        case completed(SimulatedProfile)
        /// Past its `notAfter`.
        case expired
        /// Replaced by a newer code of the same device.
        case superseded
    }

    /// Why a code ended before its window closed.
    enum Cutoff: Sendable, Equatable {
        /// The earlyExpiry fault picked this moment.
        case earlyExpiry
        /// A script denied the login.
        case denied
        /// The v1 record was deleted.
        case deleted
    }

    /// The 7-character code shown on the TV.
    public let code: String
    /// The API that issued the code.
    public let api: CodeAPI
    /// Opaque session id (`sessionId`).
    public let sessionId: String
    /// The service provider (requestor) the code belongs to.
    public let serviceProvider: String
    /// The Base64 value of the creating device's `AP-Device-Identifier: fingerprint <value>`.
    public let deviceIdentifier: String
    /// DCR client that created the session.
    public let clientId: String
    /// Selected MVPD, if known yet.
    public internal(set) var mvpd: String?
    /// `domainName` supplied when the session was created or resumed.
    public internal(set) var domainName: String?
    /// `redirectUrl` supplied when the session was created or resumed.
    public internal(set) var redirectUrl: String?
    /// Start of the code's validity window, epoch milliseconds.
    public let notBefore: Int64
    /// End of the code's validity window, epoch milliseconds.
    public internal(set) var notAfter: Int64
    /// The session's status when it was read.
    public internal(set) var status: Status

    /// The scripted outcome, if any, and when it happens (epoch ms).
    public internal(set) var script: CodeScript?
    var scriptDueAt: Int64?
    /// An end before `notAfter`, and its reason; the published window is left as issued.
    var cutoff: (at: Int64, reason: Cutoff)?

    let deviceInfo: DeviceInfo?
    let userAgent: String?
    let peerAddress: String?
    let v1Info: V1RegcodeInfo?

    /// When the code stops being usable: `notAfter`, or an earlier cutoff.
    var effectiveEnd: Int64 { min(self.notAfter, self.cutoff?.at ?? .max) }

    /// Whether the code can still be used: pending or completed, and not past `notAfter`.
    public var isLive: Bool {
        switch self.status {
        case .pending, .completed: true
        case .expired, .superseded: false
        }
    }

    /// Parameters a resume call may still need (Adobe spells `domainName` as `domain` here).
    var missingParameters: [String] {
        var missing: [String] = []
        if self.mvpd == nil { missing.append("mvpd") }
        if self.domainName == nil { missing.append("domain") }
        if self.redirectUrl == nil { missing.append("redirectUrl") }
        return missing
    }
}

/// Why completing a code failed.
public enum CodeCompletionError: Error, Sendable, Equatable {
    /// No such code (never issued, or purged long after expiry).
    case unknownCode
    /// The code is past its `notAfter`, or a newer code replaced it.
    case codeGone
    /// The MVPD is not configured.
    case unknownMVPD(String)
    /// The code was already completed with another MVPD.
    case alreadyCompleted(SimulatedProfile)
}

/// What a device gets when it asks for a new session (`POST /api/v2/{sp}/sessions`).
enum SessionCreation: Sendable {
    /// A new code was issued.
    case created(AuthenticationSession)
    /// The device already holds a valid profile for the requested MVPD, so no code is needed.
    case alreadyAuthenticated(SimulatedProfile)
}

/// The state of an authentication (a v2 profile or a v1 AuthN token) at a given time.
enum AuthenticationState: Sendable, Equatable {
    /// Never authenticated, logged out, or purged long after expiry.
    case absent
    /// Past its `notAfter`.
    case expired(SimulatedProfile)
    /// Usable.
    case valid(SimulatedProfile)
}

/// One resource's authorization answer.
struct ResourceDecision: Sendable, Equatable {
    let resource: String
    /// The MVPD's `details` text when denied, `nil` when authorized.
    let denial: String?
}

/// The v1 AuthZ token of a resource at a given time.
enum AuthorizationState: Sendable, Equatable {
    /// No valid AuthN token.
    case notAuthenticated
    /// Never authorized (or logged out).
    case absent
    case expired(AuthorizationGrant)
    case valid(AuthorizationGrant)
}

/// The deny lists in force: resource → details, MVPD → details.
public struct DenyLists: Sendable, Equatable, Codable {
    /// Denied resources and the `details` text for each (empty: a generated message).
    public var resources: [String: String]
    /// MVPDs denying every resource, with the `details` text (empty: a generated message).
    public var mvpds: [String: String]

    /// Deny lists with the given entries.
    public init(resources: [String: String] = [:], mvpds: [String: String] = [:]) {
        self.resources = resources
        self.mvpds = mvpds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.resources = try container.decodeIfPresent([String: String].self, forKey: .resources) ?? [:]
        self.mvpds = try container.decodeIfPresent([String: String].self, forKey: .mvpds) ?? [:]
    }

    /// Why `resource` is denied for a user of `mvpd`, or `nil` when it is authorized. An MVPD-wide denial wins.
    func denial(resource: String, mvpd: String) -> String? {
        let id = Self.resourceId(resource)
        if let details = self.mvpds[mvpd] {
            return details.isEmpty ? "Your \(mvpd) subscription does not include \"\(id)\"." : details
        }
        if let details = self.resources[resource] ?? self.resources[id] {
            return details.isEmpty ? "Your subscription package does not include the \"\(id)\" channel." : details
        }
        return nil
    }

    /// The id of a resource: the channel title of an MRSS resource (reference §4.10), else the text itself.
    static func resourceId(_ resource: String) -> String {
        guard resource.hasPrefix("<rss"), let channel = resource.range(of: "<channel>"),
            let open = resource.range(of: "<title>", range: channel.upperBound..<resource.endIndex),
            let close = resource.range(of: "</title>", range: open.upperBound..<resource.endIndex)
        else { return resource }
        var title = String(resource[open.upperBound..<close.lowerBound]).trimmed
        if title.hasPrefix("<![CDATA["), title.hasSuffix("]]>") {
            title = String(title.dropFirst(9).dropLast(3))
        }
        return title.isEmpty ? resource : title
    }
}

/// All mutable simulator state: DCR clients and tokens, codes (v2 sessions and v1 regcodes), v2 profiles, v1 AuthN
/// and AuthZ tokens, and the deny lists.
///
/// Keys follow reference §10: v2 profiles by (service provider, device identifier, client id); v1 tokens by
/// (requestor, deviceId); codes by code, with the creating device captured. Everything that expires is purged by a
/// sweep that runs at most once per ``sweepInterval`` of simulated time, piggybacking on requests, so memory stays
/// bounded without a timer.
public actor SimulatorState {
    struct DeviceKey: Hashable {
        let serviceProvider: String
        let deviceIdentifier: String
    }

    struct ProfileKey: Hashable {
        let serviceProvider: String
        let deviceIdentifier: String
        let clientId: String
    }

    /// Live access tokens kept per client; older ones are revoked so a client refreshing in a loop cannot grow memory.
    static let maxTokensPerClient = 16
    /// v1 codes remembered per device; older ones are still valid but no longer observed by device polls.
    static let maxV1CodesPerDevice = 16
    /// How often (in simulated time) expired records are purged.
    static let sweepInterval: Int64 = 30_000
    /// How long expired profiles and tokens are kept, so the device is told "expired" (v1 410, v2
    /// `authenticated_profile_expired`) rather than "never authenticated".
    static let expiredRetention: Int64 = 24 * 3_600_000
    private static let codeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    /// The configuration the state was created with.
    public nonisolated let configuration: SimulatorConfiguration

    private var clients: [String: RegisteredClient] = [:]
    private var tokens: [String: AccessTokenGrant] = [:]
    private var tokensByClient: [String: [String]] = [:]
    private var sessions: [String: AuthenticationSession] = [:]
    private var liveCodeByDevice: [DeviceKey: String] = [:]
    private var v1CodesByDevice: [DeviceKey: [String]] = [:]
    private var profiles: [ProfileKey: [String: SimulatedProfile]] = [:]
    private var v1Tokens: [DeviceKey: SimulatedProfile] = [:]
    private var v1Authorizations: [DeviceKey: [String: AuthorizationGrant]] = [:]
    private var deny: DenyLists
    private var lastSweep: Int64
    private var generator = SystemRandomNumberGenerator()

    /// Creates empty state governed by `configuration` (TTLs, MVPDs, deny lists, clock).
    public init(configuration: SimulatorConfiguration = .init()) {
        self.configuration = configuration
        self.deny = DenyLists(resources: configuration.denyResources, mvpds: configuration.denyMVPDs)
        self.lastSweep = configuration.clock.nowMillis
    }

    private var now: Int64 { self.configuration.clock.nowMillis }

    // MARK: DCR

    /// Registers a client application and returns its fresh credentials.
    public func registerClient(softwareId: String, redirectURIs: [String]) -> RegisteredClient {
        let client = RegisteredClient(
            clientId: self.randomToken(bytes: 12),
            clientSecret: self.randomToken(bytes: 24),
            softwareId: softwareId,
            redirectURIs: redirectURIs,
            issuedAtSeconds: self.now / 1000
        )
        self.clients[client.clientId] = client
        return client
    }

    /// Issues an access token for valid client credentials; `nil` when they do not match a registered client.
    func issueToken(clientId: String, clientSecret: String) -> AccessTokenGrant? {
        guard let client = self.clients[clientId], Self.constantTimeEquals(client.clientSecret, clientSecret) else {
            return nil
        }
        let now = self.now
        self.sweepIfDue(now: now)
        let grant = AccessTokenGrant(
            id: UUID().uuidString.lowercased(),
            accessToken: self.randomToken(bytes: 32),
            clientId: clientId,
            createdAt: now,
            expiresAt: now + self.configuration.accessTokenTTL.milliseconds
        )
        self.tokens[grant.accessToken] = grant
        var issued = self.tokensByClient[clientId, default: []]
        issued.append(grant.accessToken)
        if issued.count > Self.maxTokensPerClient {
            for revoked in issued.prefix(issued.count - Self.maxTokensPerClient) {
                self.tokens[revoked] = nil
            }
            issued.removeFirst(issued.count - Self.maxTokensPerClient)
        }
        self.tokensByClient[clientId] = issued
        return grant
    }

    /// The client an unexpired access token belongs to, or `nil` for unknown and expired tokens.
    public func clientId(forAccessToken token: String) -> String? {
        guard let grant = self.tokens[token] else { return nil }
        guard self.now < grant.expiresAt else { return nil }
        return grant.clientId
    }

    /// Makes every access token of `clientId` invalid now, as if their TTL had passed; `nil` for an unknown client,
    /// else the number of tokens revoked.
    @discardableResult
    public func expireAccessTokens(ofClient clientId: String) -> Int? {
        guard self.clients[clientId] != nil else { return nil }
        let revoked = self.tokensByClient.removeValue(forKey: clientId) ?? []
        for token in revoked {
            self.tokens[token] = nil
        }
        return revoked.count
    }

    // MARK: Codes

    /// Starts a v2 session for a device, or reports that the device is already authenticated with `mvpd`.
    ///
    /// A new code replaces the device's previous live code for the same service provider. `earlyExpiryOffset` (the
    /// earlyExpiry fault) ends the code that long after issue, while its published window stays the full TTL.
    func createSession(
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        mvpd: String?,
        domainName: String?,
        redirectUrl: String?,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        earlyExpiryOffset: Int64? = nil
    ) -> SessionCreation {
        let now = self.now
        self.sweepIfDue(now: now)
        let profileKey = ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        if let mvpd, let profile = self.profiles[profileKey]?[mvpd], now < profile.notAfter {
            return .alreadyAuthenticated(profile)
        }
        let deviceKey = DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier)
        if let previous = self.liveCodeByDevice[deviceKey], var old = self.sessions[previous],
            Self.observed(old, now: now).isLive
        {
            old.status = .superseded
            self.sessions[previous] = old
        }
        let session = self.newCode(
            api: .v2,
            serviceProvider: serviceProvider,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            mvpd: mvpd,
            ttl: self.configuration.codeTTL.milliseconds,
            now: now,
            earlyExpiryOffset: earlyExpiryOffset,
            domainName: domainName,
            redirectUrl: redirectUrl,
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: nil
        )
        self.liveCodeByDevice[deviceKey] = session.code
        return .created(session)
    }

    /// Issues a v1 registration code for (requestor, deviceId), valid `ttlMillis`.
    ///
    /// Earlier codes of the device stay valid (v1 never documented otherwise); any of them completing authenticates
    /// the device.
    func createRegcode(
        requestor: String,
        deviceId: String,
        clientId: String,
        mvpd: String?,
        ttlMillis: Int64,
        info: V1RegcodeInfo,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        earlyExpiryOffset: Int64? = nil
    ) -> AuthenticationSession {
        let now = self.now
        self.sweepIfDue(now: now)
        let session = self.newCode(
            api: .v1,
            serviceProvider: requestor,
            deviceIdentifier: deviceId,
            clientId: clientId,
            mvpd: mvpd,
            ttl: ttlMillis,
            now: now,
            earlyExpiryOffset: earlyExpiryOffset,
            domainName: nil,
            redirectUrl: nil,
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: info
        )
        let deviceKey = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        var codes = self.v1CodesByDevice[deviceKey, default: []]
        codes.append(session.code)
        if codes.count > Self.maxV1CodesPerDevice { codes.removeFirst(codes.count - Self.maxV1CodesPerDevice) }
        self.v1CodesByDevice[deviceKey] = codes
        return session
    }

    /// The session of `code` with its current status (scripts and auto-approval applied), or `nil` for an unknown
    /// code.
    ///
    /// Codes are matched case-insensitively; with `serviceProvider`, a code of another provider is unknown; with `api`,
    /// a code of the other API generation is unknown.
    public func session(code: String, serviceProvider: String? = nil, api: CodeAPI? = nil) -> AuthenticationSession? {
        let now = self.now
        self.sweepIfDue(now: now)
        let code = code.uppercased()
        guard var session = self.sessions[code] else { return nil }
        if let serviceProvider, session.serviceProvider != serviceProvider { return nil }
        if let api, session.api != api { return nil }
        self.applyScriptIfDue(&session, now: now)
        return Self.observed(session, now: now)
    }

    /// Supplies parameters of a pending session (resume); given values replace earlier ones. Sessions that are no
    /// longer pending are returned unchanged.
    func resumeSession(
        code: String,
        serviceProvider: String?,
        api: CodeAPI? = nil,
        mvpd: String?,
        domainName: String?,
        redirectUrl: String?
    ) -> AuthenticationSession? {
        guard var session = self.session(code: code, serviceProvider: serviceProvider, api: api) else { return nil }
        guard case .pending = session.status else { return session }
        if let mvpd { session.mvpd = mvpd }
        if let domainName { session.domainName = domainName }
        if let redirectUrl { session.redirectUrl = redirectUrl }
        self.sessions[session.code] = session
        return session
    }

    /// Completes a pending code as if the user had logged in with `mvpd` (default: the session's MVPD, else the
    /// first configured one): a v2 code creates the device's profile, a v1 code its AuthN token.
    ///
    /// `attributes` override the generated user metadata (see ``ProfileAttribute``). Completing an already completed
    /// code with the same (or no) MVPD returns the existing profile.
    @discardableResult
    public func completeCode(
        _ code: String,
        mvpd: String? = nil,
        userId: String? = nil,
        attributes: [String: MetadataValue]? = nil
    ) throws(CodeCompletionError) -> SimulatedProfile {
        guard let session = self.session(code: code) else { throw .unknownCode }
        switch session.status {
        case .expired, .superseded:
            throw .codeGone
        case .completed(let profile):
            if let mvpd, mvpd != profile.mvpd { throw .alreadyCompleted(profile) }
            return profile
        case .pending:
            guard let chosen = mvpd ?? session.mvpd ?? self.configuration.mvpds.first?.id,
                self.configuration.mvpd(id: chosen) != nil
            else { throw .unknownMVPD(mvpd ?? session.mvpd ?? "") }
            var updated = session
            return self.complete(&updated, mvpd: chosen, userId: userId, attributes: attributes, now: self.now)
        }
    }

    /// Gives `code` a scripted outcome; `after` counts from now. Returns the code as it stands afterwards (a due
    /// outcome is applied at once).
    @discardableResult
    public func setScript(_ script: CodeScript, forCode code: String) throws(CodeCompletionError) -> AuthenticationSession {
        guard var session = self.session(code: code) else { throw .unknownCode }
        switch session.status {
        case .expired, .superseded:
            throw .codeGone
        case .completed(let profile):
            throw .alreadyCompleted(profile)
        case .pending:
            if script.outcome == .approve, let mvpd = script.mvpd, self.configuration.mvpd(id: mvpd) == nil {
                throw .unknownMVPD(mvpd)
            }
            session.script = script
            session.scriptDueAt = self.now + script.delayMillis
            self.sessions[session.code] = session
            return self.session(code: code) ?? session
        }
    }

    /// Codes that can still be used, oldest first.
    public func liveSessions() -> [AuthenticationSession] {
        let now = self.now
        self.sweepIfDue(now: now)
        var live: [AuthenticationSession] = []
        for var session in self.sessions.values {
            self.applyScriptIfDue(&session, now: now)
            let observed = Self.observed(session, now: now)
            if observed.isLive { live.append(observed) }
        }
        return live.sorted { ($0.notBefore, $0.code) < ($1.notBefore, $1.code) }
    }

    /// Makes `code` expire now; returns `false` for an unknown code.
    @discardableResult
    public func expireCode(_ code: String) -> Bool {
        let code = code.uppercased()
        guard var session = self.sessions[code] else { return false }
        let now = self.now
        session.notAfter = min(session.notAfter, now)
        self.sessions[code] = session
        return true
    }

    /// Deletes a v1 registration record (`DELETE /reggie/v1/{requestor}/regcode/{code}`); `false` when there is no
    /// usable record.
    func deleteRegcode(code: String, requestor: String) -> Bool {
        guard var session = self.session(code: code, serviceProvider: requestor, api: .v1), session.isLive else { return false }
        if case .completed = session.status { return false }
        session.cutoff = (self.now, .deleted)
        self.sessions[session.code] = session
        return true
    }

    // MARK: v2 profiles

    /// The unexpired profiles of a device for one client application, by MVPD.
    public func profiles(serviceProvider: String, deviceIdentifier: String, clientId: String) -> [String: SimulatedProfile] {
        let now = self.now
        self.sweepIfDue(now: now)
        self.observeV2Device(DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier), now: now)
        let key = ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        return (self.profiles[key] ?? [:]).filter { now < $0.value.notAfter }
    }

    /// Removes the device's profile for `mvpd` (v2 logout); returns whether one existed.
    @discardableResult
    public func removeProfile(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String) -> Bool {
        let key = ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        guard self.profiles[key]?.removeValue(forKey: mvpd) != nil else { return false }
        if self.profiles[key]?.isEmpty == true { self.profiles[key] = nil }
        return true
    }

    /// The device's profile for `mvpd`: valid, expired (kept a while after `notAfter`) or absent.
    func profileState(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String) -> AuthenticationState {
        let now = self.now
        self.sweepIfDue(now: now)
        self.observeV2Device(DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier), now: now)
        let key = ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        guard let profile = self.profiles[key]?[mvpd] else { return .absent }
        return now < profile.notAfter ? .valid(profile) : .expired(profile)
    }

    // MARK: v1 tokens

    /// The device's v1 AuthN token, after applying due scripts and auto-approval of its codes.
    func v1AuthenticationState(requestor: String, deviceId: String) -> AuthenticationState {
        let now = self.now
        self.sweepIfDue(now: now)
        let key = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        self.observeV1Device(key, now: now)
        guard let token = self.v1Tokens[key] else { return .absent }
        return now < token.notAfter ? .valid(token) : .expired(token)
    }

    /// Clears the device's v1 AuthN and AuthZ tokens (`DELETE /api/v1/logout`).
    func v1Logout(requestor: String, deviceId: String) {
        let key = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        self.v1Tokens[key] = nil
        self.v1Authorizations[key] = nil
    }

    /// Authorizes `resource` for the device (v1 `authorize`): on success the AuthZ token is stored and returned with
    /// the AuthN token it derives from; `.failure` carries the denial details.
    func v1Authorize(requestor: String, deviceId: String, resource: String) -> (AuthenticationState, Result<AuthorizationGrant, Denial>?) {
        let state = self.v1AuthenticationState(requestor: requestor, deviceId: deviceId)
        guard case .valid(let token) = state else { return (state, nil) }
        if let details = self.deny.denial(resource: resource, mvpd: token.mvpd) {
            return (state, .failure(Denial(details: details)))
        }
        let now = self.now
        let grant = AuthorizationGrant(
            resource: resource,
            mvpd: token.mvpd,
            notBefore: now,
            notAfter: now + self.configuration.authorizationTTL.milliseconds
        )
        self.v1Authorizations[DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId), default: [:]][resource] = grant
        return (state, .success(grant))
    }

    /// The device's stored AuthZ token for `resource` (v1 `tokens/authz`).
    func v1AuthorizationState(requestor: String, deviceId: String, resource: String) -> AuthorizationState {
        guard case .valid = self.v1AuthenticationState(requestor: requestor, deviceId: deviceId) else { return .notAuthenticated }
        guard let grant = self.v1Authorizations[DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)]?[resource] else {
            return .absent
        }
        return self.now < grant.notAfter ? .valid(grant) : .expired(grant)
    }

    /// A denial's `details` text.
    struct Denial: Error, Sendable, Equatable {
        let details: String
    }

    // MARK: Decisions and deny lists

    /// Decides each resource for a user of `mvpd` against the deny lists.
    func decide(resources: [String], mvpd: String) -> [ResourceDecision] {
        resources.map { ResourceDecision(resource: $0, denial: self.deny.denial(resource: $0, mvpd: mvpd)) }
    }

    /// The deny lists in force.
    public func denyLists() -> DenyLists {
        self.deny
    }

    /// Replaces the deny lists.
    public func setDenyLists(_ lists: DenyLists) {
        self.deny = lists
    }

    // MARK: Internals

    private func newCode(
        api: CodeAPI,
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        mvpd: String?,
        ttl: Int64,
        now: Int64,
        earlyExpiryOffset: Int64?,
        domainName: String?,
        redirectUrl: String?,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?,
        v1Info: V1RegcodeInfo?
    ) -> AuthenticationSession {
        let script = self.configuration.defaultCodeScript
        let session = AuthenticationSession(
            code: self.uniqueCode(),
            api: api,
            sessionId: UUID().uuidString.lowercased(),
            serviceProvider: serviceProvider,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            mvpd: mvpd,
            domainName: domainName,
            redirectUrl: redirectUrl,
            notBefore: now,
            notAfter: now + ttl,
            status: .pending,
            script: script,
            scriptDueAt: script.map { now + $0.delayMillis },
            cutoff: earlyExpiryOffset.map { (now + max($0, 0), .earlyExpiry) },
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress,
            v1Info: v1Info
        )
        self.sessions[session.code] = session
        return session
    }

    private func complete(
        _ session: inout AuthenticationSession,
        mvpd: String,
        userId: String?,
        attributes overrides: [String: MetadataValue]?,
        now: Int64
    ) -> SimulatedProfile {
        let user =
            userId.flatMap { $0.isEmpty ? nil : $0 }
            ?? overrides?["userID"]?.stringValue
            ?? "user-\(session.code.lowercased())"
        var attributes = ProfileAttribute.defaults(userId: user, householdId: "household-\(user)")
        if let overrides {
            attributes = ProfileAttribute.merging(overrides, into: attributes)
        }
        let profile = SimulatedProfile(
            mvpd: mvpd,
            userId: user,
            householdId: attributes["householdID"]?.value.stringValue ?? "household-\(user)",
            notBefore: now,
            notAfter: now + self.configuration.profileTTL.milliseconds,
            sessionId: session.sessionId,
            attributes: attributes
        )
        session.mvpd = mvpd
        session.status = .completed(profile)
        self.sessions[session.code] = session
        switch session.api {
        case .v2:
            let key = ProfileKey(
                serviceProvider: session.serviceProvider,
                deviceIdentifier: session.deviceIdentifier,
                clientId: session.clientId
            )
            self.profiles[key, default: [:]][mvpd] = profile
        case .v1:
            // Reference §5: the AuthN token is bound to (requestor, deviceId captured at regcode creation).
            let key = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            self.v1Tokens[key] = profile
        }
        return profile
    }

    /// Applies a due scripted outcome, or the global auto-approval when the code has no script.
    private func applyScriptIfDue(_ session: inout AuthenticationSession, now: Int64) {
        guard case .pending = session.status else { return }
        let outcome: CodeScript.Outcome
        let dueAt: Int64
        if let script = session.script {
            outcome = script.outcome
            guard outcome != .never, let scriptDueAt = session.scriptDueAt else { return }
            dueAt = scriptDueAt
        } else if let delay = self.configuration.autoApproveAfter {
            outcome = .approve
            dueAt = session.notBefore + delay.milliseconds
        } else {
            return
        }
        // The outcome is stamped at its due time, not at the (later) moment somebody looked.
        guard dueAt <= now, dueAt < session.effectiveEnd else { return }
        switch outcome {
        case .approve:
            let wanted = session.script?.mvpd ?? session.mvpd
            let mvpd = wanted.flatMap { self.configuration.mvpd(id: $0)?.id } ?? self.configuration.mvpds.first?.id
            guard let mvpd else { return }
            _ = self.complete(&session, mvpd: mvpd, userId: session.script?.userId, attributes: nil, now: dueAt)
        case .deny:
            session.cutoff = (dueAt, .denied)
            self.sessions[session.code] = session
        case .never:
            return
        }
    }

    /// Polling by device (not by code) must also observe a scripted or automatic approval of the device's code.
    private func observeV2Device(_ deviceKey: DeviceKey, now: Int64) {
        if let code = self.liveCodeByDevice[deviceKey], var session = self.sessions[code] {
            self.applyScriptIfDue(&session, now: now)
        }
    }

    private func observeV1Device(_ deviceKey: DeviceKey, now: Int64) {
        for code in self.v1CodesByDevice[deviceKey] ?? [] {
            if var session = self.sessions[code] {
                self.applyScriptIfDue(&session, now: now)
            }
        }
    }

    /// The session as seen at `now`: a pending or completed session past its window (or cutoff) reads as expired.
    private static func observed(_ session: AuthenticationSession, now: Int64) -> AuthenticationSession {
        var session = session
        if session.isLive, now >= session.effectiveEnd {
            session.status = .expired
        }
        return session
    }

    private func uniqueCode() -> String {
        while true {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(7)
            for _ in 0..<7 {
                bytes.append(Self.codeAlphabet[Int.random(in: 0..<Self.codeAlphabet.count, using: &self.generator)])
            }
            let code = String(decoding: bytes, as: UTF8.self)
            if self.sessions[code] == nil { return code }
        }
    }

    private func randomToken(bytes count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &self.generator) }
        return Base64.urlSafeEncode(Data(bytes))
    }

    private static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Purges access tokens at expiry, sessions one code TTL after their window closed (kept that long so a late
    /// poll still learns the session is dead instead of "unknown code"), and profiles and v1 tokens
    /// ``expiredRetention`` after expiry.
    private func sweepIfDue(now: Int64) {
        guard now - self.lastSweep >= Self.sweepInterval || now < self.lastSweep else { return }
        self.lastSweep = now
        let retention = self.configuration.codeTTL.milliseconds
        for (code, session) in self.sessions where now >= session.effectiveEnd + retention {
            self.sessions[code] = nil
            let deviceKey = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            switch session.api {
            case .v2:
                if self.liveCodeByDevice[deviceKey] == code { self.liveCodeByDevice[deviceKey] = nil }
            case .v1:
                let remaining = (self.v1CodesByDevice[deviceKey] ?? []).filter { $0 != code }
                self.v1CodesByDevice[deviceKey] = remaining.isEmpty ? nil : remaining
            }
        }
        for (token, grant) in self.tokens where now >= grant.expiresAt {
            self.tokens[token] = nil
        }
        for (clientId, issued) in self.tokensByClient {
            let remaining = issued.filter { self.tokens[$0] != nil }
            self.tokensByClient[clientId] = remaining.isEmpty ? nil : remaining
        }
        for (key, byMVPD) in self.profiles {
            let remaining = byMVPD.filter { now < $0.value.notAfter + Self.expiredRetention }
            self.profiles[key] = remaining.isEmpty ? nil : remaining
        }
        for (key, token) in self.v1Tokens where now >= token.notAfter + Self.expiredRetention {
            self.v1Tokens[key] = nil
        }
        for (key, byResource) in self.v1Authorizations {
            let remaining = byResource.filter { now < $0.value.notAfter + Self.expiredRetention }
            self.v1Authorizations[key] = remaining.isEmpty ? nil : remaining
        }
    }
}
