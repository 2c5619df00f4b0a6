#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The authorization server side of the device flow, without I/O: device codes (RFC 8628 §3.2), polls (§3.5),
/// the user's decision, and the tokens of each grant (refresh with rotation, RFC 6749 §6; revocation, RFC 7009;
/// introspection, RFC 7662).
///
/// Every call takes the time (epoch milliseconds) and returns a typed outcome; the routes turn outcomes into the
/// provider's wire shape. It lives in ``SimulatorState`` and is reached under its lock. Memory is bounded: codes,
/// grants and assertion ids are purged after expiry by a sweep piggybacking on calls, and each map has a cap past
/// which the oldest entries are forgotten.
struct OAuthDeviceAuthority {
    /// The numbers the authority works with, read once from the configuration.
    struct Policy: Sendable {
        var codeTTL: Int64
        var interval: Int64
        var accessTokenTTL: Int64
        var refreshTokenTTL: Int64
        var pollTolerance: Int64
        var maxDeviceCodes: Int
        var maxGrants: Int
        /// A poll of a code whose expiry was already reported is answered `invalid_grant` (the provider row's quirk).
        var invalidGrantAfterExpiryReported: Bool
        /// The script every new code gets (``SimulatorConfiguration/defaultCodeScript``).
        var defaultScript: CodeScript?
        /// Automatic approval of codes without a script (``SimulatorConfiguration/autoApproveAfter``).
        var autoApproveAfter: Int64?
    }

    /// Why a code could not be decided on (admin API, verification page).
    enum CodeError: Error, Sendable, Equatable {
        /// No such user code (never issued, or purged after expiry).
        case unknownCode
        /// The code expired, or its tokens were already issued.
        case codeGone
        /// The user already approved or denied it.
        case alreadyDecided(approved: Bool)
    }

    /// The answer to a device code poll (RFC 8628 §3.5).
    enum PollOutcome: Sendable, Equatable {
        case pending
        /// Polled before the interval: the code's interval is now `interval` milliseconds.
        case slowDown(interval: Int64)
        case denied
        case expired
        /// Unknown code, a code of another client, or one already exchanged (or whose expiry was reported, per
        /// ``Policy/invalidGrantAfterExpiryReported``).
        case invalidGrant
        case issued(IssuedTokens)
    }

    /// The answer to a refresh (RFC 6749 §6).
    enum RefreshOutcome: Sendable, Equatable {
        case issued(IssuedTokens)
        /// Unknown, rotated away, revoked or expired refresh token, or one of another client.
        case invalidGrant
        /// A scope beyond the grant's.
        case invalidScope
    }

    /// What a revocation did (the endpoint answers 200 whatever it did, RFC 7009 §2.2).
    enum RevocationOutcome: Sendable, Equatable {
        /// An access token was revoked.
        case accessToken
        /// A refresh token was revoked, and its grant's access tokens with it (RFC 7009 §2.1).
        case grant
        /// No token of this client matched.
        case unknown
    }

    /// A token answer's content.
    struct IssuedTokens: Sendable, Equatable {
        let accessToken: String
        let refreshToken: String
        /// Seconds.
        let expiresIn: Int64
        let scope: String?
    }

    /// What an active token stands for (introspection and userinfo).
    struct TokenInfo: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            case access
            case refresh
        }

        let kind: Kind
        let clientId: String
        let subject: String
        let scope: String?
        let issuedAt: Int64
        let expiresAt: Int64
    }

    /// One device authorization, from issue until it is purged.
    struct DeviceCode: Sendable {
        /// Where the code is in its life; expiry is read from the clock (`expiresAt`), except that its report is
        /// remembered.
        enum Phase: Sendable, Equatable {
            case pending
            /// The user approved as `subject`; the next poll gets the tokens.
            case approved(subject: String)
            case denied
            /// The tokens were issued (grant `grantID`): the code cannot be used again.
            case redeemed(grantID: String)
            /// A poll was told `expired_token`.
            case expiryReported
        }

        let deviceCode: String
        /// Eight letters, without the hyphen shown to the user.
        let userCode: String
        let clientId: String
        let scope: String?
        let issuedAt: Int64
        var expiresAt: Int64
        /// Milliseconds; grows by 5 s with each `slow_down`.
        var interval: Int64
        var lastPollAt: Int64?
        var script: CodeScript?
        var scriptDueAt: Int64?
        var phase: Phase

        /// The user code as shown: `XXXX-XXXX` (RFC 8628 §6.1).
        var displayedUserCode: String { Self.display(self.userCode) }

        static func display(_ code: String) -> String {
            code.count == 8 ? "\(code.prefix(4))-\(code.suffix(4))" : code
        }

        /// Where a code stands for the user and the admin API.
        enum Status: String, Sendable, Encodable {
            case pending, approved, denied, redeemed, expired
        }

        func status(now: Int64) -> Status {
            switch self.phase {
            case .redeemed: .redeemed
            case .expiryReported: .expired
            case _ where now >= self.expiresAt: .expired
            case .pending: .pending
            case .approved: .approved
            case .denied: .denied
            }
        }
    }

    private struct Grant: Sendable {
        let id: String
        let clientId: String
        let subject: String
        let scope: String?
        let issuedAt: Int64
        var refreshToken: String
        var refreshExpiresAt: Int64
        /// Newest last; at most ``maxAccessTokensPerGrant``.
        var accessTokens: [String]
    }

    private struct AccessToken: Sendable {
        let grantID: String
        let issuedAt: Int64
        let expiresAt: Int64
    }

    /// RFC 8628 §6.1: consonants only, so no word can be spelt and no letter mistaken for a digit.
    static let userCodeAlphabet = Array("BCDFGHJKLMNPQRSTVWXZ".utf8)
    /// Access tokens kept per grant (each refresh adds one; older ones stay valid until then).
    static let maxAccessTokensPerGrant = 4
    /// Client assertion ids remembered against replay; an assertion may not live longer than ``maxAssertionLifetime``.
    static let maxAssertions = 20_000
    static let maxAssertionLifetime: Int64 = 3_600_000
    /// RFC 8628 §3.5: each `slow_down` adds 5 seconds.
    static let slowDownStep: Int64 = 5_000
    static let sweepInterval: Int64 = 30_000

    let policy: Policy
    private var codes: [String: DeviceCode] = [:]
    private var deviceCodeByUserCode: [String: String] = [:]
    private var grants: [String: Grant] = [:]
    private var accessTokens: [String: AccessToken] = [:]
    private var grantByRefreshToken: [String: String] = [:]
    /// `client_id` NUL `jti` → the assertion's expiry.
    private var assertions: [String: Int64] = [:]
    private var lastSweep: Int64
    private var generator = SystemRandomNumberGenerator()
    private(set) var stats = OAuthStats()

    init(policy: Policy, now: Int64) {
        self.policy = policy
        self.lastSweep = now
    }

    /// Counts held, for tests of the bounds.
    var counts: (codes: Int, grants: Int, accessTokens: Int, assertions: Int) {
        (self.codes.count, self.grants.count, self.accessTokens.count, self.assertions.count)
    }

    // MARK: Device authorization and polls

    /// Issues a device code and user code for `clientId` (RFC 8628 §3.2).
    mutating func authorize(clientId: String, scope: String?, now: Int64) -> DeviceCode {
        self.sweepIfDue(now: now)
        if self.codes.count >= self.policy.maxDeviceCodes { self.makeRoom(now: now) }
        let script = self.policy.defaultScript
        let code = DeviceCode(
            deviceCode: self.uniqueToken(),
            userCode: self.uniqueUserCode(),
            clientId: clientId,
            scope: scope,
            issuedAt: now,
            expiresAt: now + self.policy.codeTTL,
            interval: self.policy.interval,
            lastPollAt: nil,
            script: script,
            scriptDueAt: script.map { now + $0.delayMillis },
            phase: .pending
        )
        self.codes[code.deviceCode] = code
        self.deviceCodeByUserCode[code.userCode] = code.deviceCode
        self.stats.deviceAuthorizations += 1
        return code
    }

    /// A token request with `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4).
    mutating func poll(deviceCode: String, clientId: String, now: Int64) -> PollOutcome {
        self.sweepIfDue(now: now)
        self.stats.polls += 1
        guard var code = self.codes[deviceCode], code.clientId == clientId else {
            self.stats.invalidGrants += 1
            return .invalidGrant
        }
        self.applyScriptIfDue(&code, now: now)
        let early = code.lastPollAt.map { now - $0 < code.interval - self.policy.pollTolerance } ?? false
        if early { self.stats.earlyPolls += 1 }
        code.lastPollAt = now
        let outcome: PollOutcome
        switch code.phase {
        case .redeemed:
            outcome = .invalidGrant
        case .expiryReported:
            outcome = self.policy.invalidGrantAfterExpiryReported ? .invalidGrant : .expired
        case _ where now >= code.expiresAt:
            code.phase = .expiryReported
            outcome = .expired
        case .denied:
            outcome = .denied
        case .pending where early:
            // slow_down is a variant of authorization_pending (§3.5): only a pending code is slowed.
            code.interval += Self.slowDownStep
            outcome = .slowDown(interval: code.interval)
        case .pending:
            outcome = .pending
        case .approved(let subject):
            let tokens = self.issueGrant(clientId: code.clientId, subject: subject, scope: code.scope, now: now)
            code.phase = .redeemed(grantID: tokens.grantID)
            outcome = .issued(tokens.issued)
        }
        self.codes[deviceCode] = code
        self.stats.count(outcome)
        return outcome
    }

    /// The code a user typed (any case, hyphens and spaces ignored, RFC 8628 §6.1), scripts applied.
    mutating func code(userCode: String, now: Int64) -> DeviceCode? {
        self.sweepIfDue(now: now)
        guard let deviceCode = self.deviceCodeByUserCode[Self.normalizedUserCode(userCode)], var code = self.codes[deviceCode] else {
            return nil
        }
        self.applyScriptIfDue(&code, now: now)
        self.codes[deviceCode] = code
        return code
    }

    /// Codes not yet ended, oldest first.
    mutating func liveCodes(now: Int64) -> [DeviceCode] {
        self.sweepIfDue(now: now)
        var live: [DeviceCode] = []
        for deviceCode in Array(self.codes.keys) {
            guard var code = self.codes[deviceCode] else { continue }
            self.applyScriptIfDue(&code, now: now)
            self.codes[deviceCode] = code
            switch code.phase {
            case .pending, .approved: if now < code.expiresAt { live.append(code) }
            case .denied, .redeemed, .expiryReported: break
            }
        }
        return live.sorted { ($0.issuedAt, $0.userCode) < ($1.issuedAt, $1.userCode) }
    }

    /// The user approves the code as `subject` (verification page, admin API, script).
    @discardableResult
    mutating func approve(userCode: String, subject: String?, now: Int64) throws(CodeError) -> DeviceCode {
        var code = try self.pendingCode(userCode: userCode, now: now)
        code.phase = .approved(subject: subject.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultSubject(code))
        self.codes[code.deviceCode] = code
        return code
    }

    /// The user denies the code: its polls get `access_denied`.
    @discardableResult
    mutating func deny(userCode: String, now: Int64) throws(CodeError) -> DeviceCode {
        var code = try self.pendingCode(userCode: userCode, now: now)
        code.phase = .denied
        self.codes[code.deviceCode] = code
        return code
    }

    /// Gives the code a scripted outcome (`approve`, `deny`, `never`), `after` counting from now.
    @discardableResult
    mutating func setScript(_ script: CodeScript, userCode: String, now: Int64) throws(CodeError) -> DeviceCode {
        var code = try self.pendingCode(userCode: userCode, now: now)
        code.script = script
        code.scriptDueAt = now + script.delayMillis
        self.applyScriptIfDue(&code, now: now)
        self.codes[code.deviceCode] = code
        return code
    }

    /// Makes the code expire now; `false` for an unknown code.
    mutating func expire(userCode: String, now: Int64) -> Bool {
        guard let deviceCode = self.deviceCodeByUserCode[Self.normalizedUserCode(userCode)], var code = self.codes[deviceCode] else {
            return false
        }
        code.expiresAt = min(code.expiresAt, now)
        self.codes[deviceCode] = code
        return true
    }

    private mutating func pendingCode(userCode: String, now: Int64) throws(CodeError) -> DeviceCode {
        guard let code = self.code(userCode: userCode, now: now) else { throw .unknownCode }
        guard now < code.expiresAt else { throw .codeGone }
        switch code.phase {
        case .pending: return code
        case .approved: throw .alreadyDecided(approved: true)
        case .denied: throw .alreadyDecided(approved: false)
        case .redeemed, .expiryReported: throw .codeGone
        }
    }

    /// Applies a due scripted outcome, or the global automatic approval when the code has no script: the same rules
    /// as Adobe codes (``SimulatorState/applyScriptIfDue(_:now:)``).
    private func applyScriptIfDue(_ code: inout DeviceCode, now: Int64) {
        guard code.phase == .pending else { return }
        let outcome: CodeScript.Outcome
        let dueAt: Int64
        if let script = code.script {
            guard script.outcome != .never, let scriptDueAt = code.scriptDueAt else { return }
            outcome = script.outcome
            dueAt = scriptDueAt
        } else if let delay = self.policy.autoApproveAfter {
            outcome = .approve
            dueAt = code.issuedAt + delay
        } else {
            return
        }
        guard dueAt <= now, dueAt < code.expiresAt else { return }
        switch outcome {
        case .approve: code.phase = .approved(subject: code.script?.userId ?? Self.defaultSubject(code))
        case .deny: code.phase = .denied
        case .never: return
        }
    }

    private static func defaultSubject(_ code: DeviceCode) -> String {
        "user-\(code.userCode.lowercased())"
    }

    static func normalizedUserCode(_ typed: String) -> String {
        String(typed.uppercased().unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\t" }.map(Character.init))
    }

    /// Whether `typed` has the shape of a user code (eight letters of the alphabet, hyphens ignored), as opposed to
    /// an Adobe registration code.
    static func isUserCode(_ typed: String) -> Bool {
        let code = Self.normalizedUserCode(typed)
        return code.utf8.count == 8 && code.utf8.allSatisfy { Self.userCodeAlphabet.contains($0) }
    }

    // MARK: Tokens

    /// A token request with `grant_type=refresh_token`: rotates the refresh token (the old one stops working).
    mutating func refresh(refreshToken: String, clientId: String, scope: String?, now: Int64) -> RefreshOutcome {
        self.sweepIfDue(now: now)
        guard let grantID = self.grantByRefreshToken[refreshToken], var grant = self.grants[grantID], grant.clientId == clientId,
            now < grant.refreshExpiresAt
        else {
            self.stats.refreshesRefused += 1
            return .invalidGrant
        }
        var granted = grant.scope
        if let scope {
            // RFC 6749 §6: a refresh may narrow the scope, never widen it.
            let asked = Self.scopes(scope)
            guard asked.isSubset(of: Self.scopes(grant.scope)) else {
                self.stats.refreshesRefused += 1
                return .invalidScope
            }
            granted = scope
        }
        self.grantByRefreshToken[refreshToken] = nil
        grant.refreshToken = self.uniqueToken()
        grant.refreshExpiresAt = now + self.policy.refreshTokenTTL
        self.grantByRefreshToken[grant.refreshToken] = grantID
        let accessToken = self.addAccessToken(to: &grant, now: now)
        self.grants[grantID] = grant
        self.stats.refreshes += 1
        return .issued(
            IssuedTokens(
                accessToken: accessToken,
                refreshToken: grant.refreshToken,
                expiresIn: self.policy.accessTokenTTL / 1000,
                scope: granted
            )
        )
    }

    /// RFC 7009: revokes `token` when `clientId` holds it. The hint only orders the lookup (§2.1).
    mutating func revoke(token: String, clientId: String, now: Int64) -> RevocationOutcome {
        self.sweepIfDue(now: now)
        self.stats.revocations += 1
        if let access = self.accessTokens[token], let grant = self.grants[access.grantID], grant.clientId == clientId {
            self.accessTokens[token] = nil
            self.grants[access.grantID]?.accessTokens.removeAll { $0 == token }
            return .accessToken
        }
        if let grantID = self.grantByRefreshToken[token], let grant = self.grants[grantID], grant.clientId == clientId {
            self.removeGrant(grantID)
            return .grant
        }
        return .unknown
    }

    /// What an active token of `clientId` stands for; `nil` when it is unknown, expired, revoked or another client's
    /// (RFC 7662 §2.2: all answered `{"active": false}`). Without `clientId`, any client's token.
    mutating func tokenInfo(_ token: String, clientId: String?, now: Int64) -> TokenInfo? {
        self.sweepIfDue(now: now)
        if let access = self.accessTokens[token], now < access.expiresAt, let grant = self.grants[access.grantID],
            clientId == nil || grant.clientId == clientId
        {
            return TokenInfo(
                kind: .access,
                clientId: grant.clientId,
                subject: grant.subject,
                scope: grant.scope,
                issuedAt: access.issuedAt,
                expiresAt: access.expiresAt
            )
        }
        if let grantID = self.grantByRefreshToken[token], let grant = self.grants[grantID], now < grant.refreshExpiresAt,
            clientId == nil || grant.clientId == clientId
        {
            return TokenInfo(
                kind: .refresh,
                clientId: grant.clientId,
                subject: grant.subject,
                scope: grant.scope,
                issuedAt: grant.issuedAt,
                expiresAt: grant.refreshExpiresAt
            )
        }
        return nil
    }

    /// Records a client assertion's `jti` until its expiry; `false` when it was already used (RFC 7523 §3 item 7
    /// lets the server refuse a replay) or lives longer than ``maxAssertionLifetime``.
    mutating func consumeAssertion(clientId: String, jti: String, expiresAt: Int64, now: Int64) -> Bool {
        self.sweepIfDue(now: now)
        guard expiresAt - now <= Self.maxAssertionLifetime else { return false }
        let key = clientId + "\u{0}" + jti
        if let previous = self.assertions[key], now < previous { return false }
        if self.assertions.count >= Self.maxAssertions {
            self.sweep(now: now)
            if self.assertions.count >= Self.maxAssertions {
                // Every remembered assertion is still live: forget the ones closest to expiry, which a replay could
                // use for the least time.
                let oldest = self.assertions.sorted { $0.value < $1.value }.prefix(Self.maxAssertions / 8 + 1)
                for (key, _) in oldest { self.assertions[key] = nil }
            }
        }
        self.assertions[key] = expiresAt
        return true
    }

    /// Counts an authentication refusal.
    mutating func countInvalidClient() {
        self.stats.invalidClients += 1
    }

    mutating func countUserinfo() {
        self.stats.userinfoCalls += 1
    }

    mutating func countIntrospection() {
        self.stats.introspections += 1
    }

    mutating func resetStats() {
        self.stats = OAuthStats()
    }

    private mutating func issueGrant(clientId: String, subject: String, scope: String?, now: Int64) -> (grantID: String, issued: IssuedTokens) {
        if self.grants.count >= self.policy.maxGrants { self.makeRoomForGrants(now: now) }
        var grant = Grant(
            id: self.uniqueToken(bytes: 12),
            clientId: clientId,
            subject: subject,
            scope: scope,
            issuedAt: now,
            refreshToken: self.uniqueToken(),
            refreshExpiresAt: now + self.policy.refreshTokenTTL,
            accessTokens: []
        )
        let accessToken = self.addAccessToken(to: &grant, now: now)
        self.grants[grant.id] = grant
        self.grantByRefreshToken[grant.refreshToken] = grant.id
        let issued = IssuedTokens(
            accessToken: accessToken,
            refreshToken: grant.refreshToken,
            expiresIn: self.policy.accessTokenTTL / 1000,
            scope: scope
        )
        return (grant.id, issued)
    }

    private mutating func addAccessToken(to grant: inout Grant, now: Int64) -> String {
        let token = self.uniqueToken()
        self.accessTokens[token] = AccessToken(grantID: grant.id, issuedAt: now, expiresAt: now + self.policy.accessTokenTTL)
        grant.accessTokens.append(token)
        if grant.accessTokens.count > Self.maxAccessTokensPerGrant {
            for old in grant.accessTokens.prefix(grant.accessTokens.count - Self.maxAccessTokensPerGrant) {
                self.accessTokens[old] = nil
            }
            grant.accessTokens.removeFirst(grant.accessTokens.count - Self.maxAccessTokensPerGrant)
        }
        return token
    }

    private mutating func removeGrant(_ grantID: String) {
        guard let grant = self.grants.removeValue(forKey: grantID) else { return }
        self.grantByRefreshToken[grant.refreshToken] = nil
        for token in grant.accessTokens { self.accessTokens[token] = nil }
    }

    static func scopes(_ scope: String?) -> Set<Substring> {
        Set((scope ?? "").split(separator: " "))
    }

    // MARK: Bounds

    private mutating func sweepIfDue(now: Int64) {
        guard now - self.lastSweep >= Self.sweepInterval || now < self.lastSweep else { return }
        self.sweep(now: now)
    }

    /// Purges codes one code lifetime after expiry (a late poll still learns `expired_token`), expired tokens and
    /// grants, and assertion ids past their expiry.
    mutating func sweep(now: Int64) {
        self.lastSweep = now
        for (deviceCode, code) in self.codes where now >= code.expiresAt + self.policy.codeTTL {
            self.codes[deviceCode] = nil
            self.deviceCodeByUserCode[code.userCode] = nil
        }
        for (token, access) in self.accessTokens where now >= access.expiresAt {
            self.accessTokens[token] = nil
            self.grants[access.grantID]?.accessTokens.removeAll { $0 == token }
        }
        for (grantID, grant) in self.grants where now >= grant.refreshExpiresAt && grant.accessTokens.isEmpty {
            self.removeGrant(grantID)
        }
        for (key, expiresAt) in self.assertions where now >= expiresAt {
            self.assertions[key] = nil
        }
    }

    /// At the cap: purges, then forgets the oldest eighth of the codes if still full.
    private mutating func makeRoom(now: Int64) {
        self.sweep(now: now)
        guard self.codes.count >= self.policy.maxDeviceCodes else { return }
        let oldest = self.codes.values.sorted { $0.issuedAt < $1.issuedAt }.prefix(self.policy.maxDeviceCodes / 8 + 1)
        for code in oldest {
            self.codes[code.deviceCode] = nil
            self.deviceCodeByUserCode[code.userCode] = nil
        }
        self.stats.evicted += oldest.count
    }

    private mutating func makeRoomForGrants(now: Int64) {
        self.sweep(now: now)
        guard self.grants.count >= self.policy.maxGrants else { return }
        let oldest = self.grants.values.sorted { $0.issuedAt < $1.issuedAt }.prefix(self.policy.maxGrants / 8 + 1)
        for grant in oldest { self.removeGrant(grant.id) }
        self.stats.evicted += oldest.count
    }

    // MARK: Random values

    private mutating func uniqueUserCode() -> String {
        while true {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8)
            for _ in 0..<8 {
                bytes.append(Self.userCodeAlphabet[Int.random(in: 0..<Self.userCodeAlphabet.count, using: &self.generator)])
            }
            let code = String(decoding: bytes, as: UTF8.self)
            if self.deviceCodeByUserCode[code] == nil { return code }
        }
    }

    /// A random URL-safe token; 32 bytes unless told (RFC 6749 §10.10: guessing must be infeasible).
    private mutating func uniqueToken(bytes count: Int = 32) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &self.generator) }
        return Base64.urlSafeEncode(Data(bytes))
    }
}

/// Device flow counters; `oauth` in `GET /_sim/stats`.
package struct OAuthStats: Sendable, Equatable, Codable {
    package var deviceAuthorizations = 0
    /// Device code polls of the token endpoint.
    package var polls = 0
    /// Polls that came sooner than the code's interval after the previous one.
    package var earlyPolls = 0
    package var slowDowns = 0
    package var pending = 0
    package var denied = 0
    package var expired = 0
    package var invalidGrants = 0
    /// Device codes exchanged for tokens.
    package var tokensIssued = 0
    package var refreshes = 0
    package var refreshesRefused = 0
    package var revocations = 0
    package var introspections = 0
    package var userinfoCalls = 0
    package var invalidClients = 0
    /// Codes and grants forgotten at the caps before they expired.
    package var evicted = 0

    package init() {}

    mutating func count(_ outcome: OAuthDeviceAuthority.PollOutcome) {
        switch outcome {
        case .pending: self.pending += 1
        case .slowDown: self.slowDowns += 1
        case .denied: self.denied += 1
        case .expired: self.expired += 1
        case .invalidGrant: self.invalidGrants += 1
        case .issued: self.tokensIssued += 1
        }
    }

    private enum CodingKeys: String, CodingKey {
        case deviceAuthorizations = "device_authorizations"
        case polls
        case earlyPolls = "early_polls"
        case slowDowns = "slow_downs"
        case pending
        case denied
        case expired
        case invalidGrants = "invalid_grants"
        case tokensIssued = "tokens_issued"
        case refreshes
        case refreshesRefused = "refreshes_refused"
        case revocations
        case introspections
        case userinfoCalls = "userinfo_calls"
        case invalidClients = "invalid_clients"
        case evicted
    }
}
