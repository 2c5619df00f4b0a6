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

    /// The 7-character code shown on the TV.
    public let code: String
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

    let deviceInfo: DeviceInfo?
    let userAgent: String?
    let peerAddress: String?

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

/// All mutable simulator state: DCR clients and tokens, sessions/codes and profiles.
///
/// Keys follow reference §10: profiles by (service provider, device identifier, client id); codes by code,
/// with the creating device captured. Everything that expires is purged by a sweep that runs at most once per
/// ``sweepInterval`` of simulated time, piggybacking on requests, so memory stays bounded without a timer.
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
    /// How often (in simulated time) expired records are purged.
    static let sweepInterval: Int64 = 30_000
    private static let codeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    /// The configuration the state was created with.
    public nonisolated let configuration: SimulatorConfiguration

    private var clients: [String: RegisteredClient] = [:]
    private var tokens: [String: AccessTokenGrant] = [:]
    private var tokensByClient: [String: [String]] = [:]
    private var sessions: [String: AuthenticationSession] = [:]
    private var liveCodeByDevice: [DeviceKey: String] = [:]
    private var profiles: [ProfileKey: [String: SimulatedProfile]] = [:]
    private var lastSweep: Int64
    private var generator = SystemRandomNumberGenerator()

    /// Creates empty state governed by `configuration` (TTLs, MVPDs, clock).
    public init(configuration: SimulatorConfiguration = .init()) {
        self.configuration = configuration
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

    // MARK: Sessions

    /// Starts a session for a device, or reports that the device is already authenticated with `mvpd`.
    ///
    /// A new code replaces the device's previous live code for the same service provider.
    func createSession(
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String,
        mvpd: String?,
        domainName: String?,
        redirectUrl: String?,
        deviceInfo: DeviceInfo?,
        userAgent: String?,
        peerAddress: String?
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
        let session = AuthenticationSession(
            code: self.uniqueCode(),
            sessionId: UUID().uuidString.lowercased(),
            serviceProvider: serviceProvider,
            deviceIdentifier: deviceIdentifier,
            clientId: clientId,
            mvpd: mvpd,
            domainName: domainName,
            redirectUrl: redirectUrl,
            notBefore: now,
            notAfter: now + self.configuration.codeTTL.milliseconds,
            status: .pending,
            deviceInfo: deviceInfo,
            userAgent: userAgent,
            peerAddress: peerAddress
        )
        self.sessions[session.code] = session
        self.liveCodeByDevice[deviceKey] = session.code
        return .created(session)
    }

    /// The session of `code` with its current status (auto-approval applied), or `nil` for an unknown code.
    ///
    /// Codes are matched case-insensitively; with `serviceProvider`, a code of another provider is unknown.
    public func session(code: String, serviceProvider: String? = nil) -> AuthenticationSession? {
        let now = self.now
        self.sweepIfDue(now: now)
        let code = code.uppercased()
        guard var session = self.sessions[code] else { return nil }
        if let serviceProvider, session.serviceProvider != serviceProvider { return nil }
        self.autoApproveIfDue(&session, now: now)
        return Self.observed(session, now: now)
    }

    /// Supplies parameters of a pending session (resume); given values replace earlier ones. Sessions that are no
    /// longer pending are returned unchanged.
    func resumeSession(code: String, serviceProvider: String?, mvpd: String?, domainName: String?, redirectUrl: String?)
        -> AuthenticationSession?
    {
        guard var session = self.session(code: code, serviceProvider: serviceProvider) else { return nil }
        guard case .pending = session.status else { return session }
        if let mvpd { session.mvpd = mvpd }
        if let domainName { session.domainName = domainName }
        if let redirectUrl { session.redirectUrl = redirectUrl }
        self.sessions[session.code] = session
        return session
    }

    /// Completes a pending code as if the user had logged in with `mvpd` (default: the session's MVPD, else the
    /// first configured one) and creates the device's profile.
    ///
    /// Completing an already completed code with the same (or no) MVPD returns the existing profile.
    @discardableResult
    public func completeCode(_ code: String, mvpd: String? = nil, userId: String? = nil) throws(CodeCompletionError)
        -> SimulatedProfile
    {
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
            return self.complete(&updated, mvpd: chosen, userId: userId, now: self.now)
        }
    }

    /// Codes that can still be used, oldest first.
    public func liveSessions() -> [AuthenticationSession] {
        let now = self.now
        self.sweepIfDue(now: now)
        var live: [AuthenticationSession] = []
        for var session in self.sessions.values {
            self.autoApproveIfDue(&session, now: now)
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

    // MARK: Profiles

    /// The unexpired profiles of a device for one client application, by MVPD.
    public func profiles(serviceProvider: String, deviceIdentifier: String, clientId: String) -> [String: SimulatedProfile] {
        let now = self.now
        self.sweepIfDue(now: now)
        // Polling by device (not by code) must also observe an auto-approval of the device's code.
        let deviceKey = DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier)
        if let code = self.liveCodeByDevice[deviceKey], var session = self.sessions[code] {
            self.autoApproveIfDue(&session, now: now)
        }
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

    // MARK: Internals

    private func complete(_ session: inout AuthenticationSession, mvpd: String, userId: String?, now: Int64) -> SimulatedProfile {
        let user = userId.flatMap { $0.isEmpty ? nil : $0 } ?? "user-\(session.code.lowercased())"
        let profile = SimulatedProfile(
            mvpd: mvpd,
            userId: user,
            householdId: "household-\(user)",
            notBefore: now,
            notAfter: now + self.configuration.profileTTL.milliseconds,
            sessionId: session.sessionId
        )
        session.mvpd = mvpd
        session.status = .completed(profile)
        self.sessions[session.code] = session
        let key = ProfileKey(
            serviceProvider: session.serviceProvider,
            deviceIdentifier: session.deviceIdentifier,
            clientId: session.clientId
        )
        self.profiles[key, default: [:]][mvpd] = profile
        return profile
    }

    private func autoApproveIfDue(_ session: inout AuthenticationSession, now: Int64) {
        guard let delay = self.configuration.autoApproveAfter, case .pending = session.status else { return }
        let dueAt = session.notBefore + delay.milliseconds
        // Completion is stamped at its due time, not at the (later) moment somebody looked.
        guard dueAt <= now, dueAt < session.notAfter else { return }
        let mvpd = session.mvpd.flatMap { self.configuration.mvpd(id: $0)?.id } ?? self.configuration.mvpds.first?.id
        guard let mvpd else { return }
        _ = self.complete(&session, mvpd: mvpd, userId: nil, now: dueAt)
    }

    /// The session as seen at `now`: a pending or completed session past its window reads as expired.
    private static func observed(_ session: AuthenticationSession, now: Int64) -> AuthenticationSession {
        var session = session
        if session.isLive, now >= session.notAfter {
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

    /// Purges expired tokens and profiles, and sessions one code TTL after their window closed (kept that long so a
    /// late poll still learns the session is dead instead of "unknown code").
    private func sweepIfDue(now: Int64) {
        guard now - self.lastSweep >= Self.sweepInterval || now < self.lastSweep else { return }
        self.lastSweep = now
        let retention = self.configuration.codeTTL.milliseconds
        for (code, session) in self.sessions where now >= session.notAfter + retention {
            self.sessions[code] = nil
            let deviceKey = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            if self.liveCodeByDevice[deviceKey] == code { self.liveCodeByDevice[deviceKey] = nil }
        }
        for (token, grant) in self.tokens where now >= grant.expiresAt {
            self.tokens[token] = nil
        }
        for (clientId, issued) in self.tokensByClient {
            let remaining = issued.filter { self.tokens[$0] != nil }
            self.tokensByClient[clientId] = remaining.isEmpty ? nil : remaining
        }
        for (key, byMVPD) in self.profiles {
            let remaining = byMVPD.filter { now < $0.value.notAfter }
            self.profiles[key] = remaining.isEmpty ? nil : remaining
        }
    }
}
