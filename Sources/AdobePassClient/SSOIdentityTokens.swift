import BackendHTTP
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import RegcodeEngine
import RegcodeSupport

/// The REST v2 single sign-on identity tokens a device presents (sso.md §2.2, §2.3, §3.3): a platform identity token
/// (`Adobe-Subject-Token`, or Roku's `X-Roku-Reserved-Roku-Connect-Token`) and a service token (`AD-Service-Token`).
///
/// The tokens come from the emulated platform identity service and SSO service, which pass-sim serves next to the
/// backend: `POST /_sim/identity/platform-token {"sub", "did"}` and `POST /_sim/identity/service-token {"sub"}`, each
/// answering `{"token": <JWS>}`. A token is kept per (kind, subject, device or issuer) until shortly before the `exp`
/// of its payload, then fetched again; concurrent callers needing the same token share one fetch. A token that cannot
/// be obtained is left out of the call (the backend then serves it without SSO, as Adobe does with an invalid
/// header) and the failure is remembered briefly, so a backend without these endpoints is not asked on every call.
///
/// Token values are secrets: they are never logged.
actor SSOIdentityTokens {
    /// The identity service a token comes from.
    enum Kind: String, Sendable {
        case platform
        case service
    }

    /// What a token is cached under: the kind, the user (`sub`) and the platform device (`did`) or the issuer.
    struct Key: Hashable, Sendable {
        var kind: Kind
        var subject: String
        var scope: String
    }

    private enum Entry {
        /// A fetch under way; callers await it.
        case pending(Task<Fetched, Never>)
        /// A token (nil: the fetch failed) to reuse until `refreshAt`.
        case ready(token: String?, refreshAt: Date)
    }

    struct Fetched: Sendable {
        var token: String?
        var refreshAt: Date
    }

    /// Header names, as Adobe's docs spell them.
    static let adobeSubjectToken = "Adobe-Subject-Token"
    static let rokuConnectToken = "X-Roku-Reserved-Roku-Connect-Token"
    static let serviceToken = "AD-Service-Token"

    /// The backend's origin (nil: not a URL; nothing is fetched).
    private let origin: Origin?
    /// The same transport as every backend call: the identity services are served next to the backend.
    private let connectionPools: ConnectionPools
    private let timeout: Duration
    private let maxResponseBodyBytes: Int
    private let maxEntries: Int
    /// How long before `exp` a token stops being reused.
    private let refreshMargin: TimeInterval
    /// How long a failed fetch is remembered before the next attempt.
    private let failureBackoff: TimeInterval
    private let now: @Sendable () -> Date
    private var entries: [Key: Entry] = [:]
    /// Fetches started (successful or not), for tests and diagnostics.
    private(set) var fetchCount = 0

    init(
        origin: Origin?,
        connectionPools: ConnectionPools,
        timeout: Duration,
        maxResponseBodyBytes: Int,
        maxEntries: Int = 20_000,
        refreshMargin: TimeInterval = 30,
        failureBackoff: TimeInterval = 10,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.origin = origin
        self.connectionPools = connectionPools
        self.timeout = timeout
        self.maxResponseBodyBytes = maxResponseBodyBytes
        self.maxEntries = max(1, maxEntries)
        self.refreshMargin = refreshMargin
        self.failureBackoff = failureBackoff
        self.now = now
    }

    /// Whether a call gets the SSO headers: the v2 calls whose OAS entry lists `Adobe-Subject-Token` and
    /// `AD-Service-Token` (`sessions`, `profiles`, `profiles/{mvpd}`, decisions, `logout/{mvpd}`). Amazon's cookbook
    /// asks for the token on every `/api/v2/*` call, but the OAS lists it on these only, and nothing outside the OAS
    /// is sent.
    static func applies(to request: BackendRequest, path: String) -> Bool {
        guard path.hasPrefix("/api/v2/") else { return false }
        switch request {
        case .createSession, .checkAuthentication, .launchProfiles, .fetchProfile, .userMetadata, .authorize, .mediaToken, .preauthorize, .logout:
            return true
        case .registerClient, .obtainAccessToken, .configuration, .pollProfile, .partnerSession, .partnerProfile, .wire: return false
        }
    }

    /// The SSO headers for `identity` on device `deviceID`, fetching tokens as needed. Tokens that cannot be
    /// obtained are left out (logged at warning, without the token).
    func headers(for identity: SSOIdentitySettings, deviceID: String, logger: Logger) async -> [(String, String)] {
        var headers: [(String, String)] = []
        if let user = identity.platformUser, !user.isEmpty {
            let key = Key(kind: .platform, subject: user, scope: deviceID)
            if let token = await token(for: key, logger: logger) {
                headers.append((identity.rokuHeader ? Self.rokuConnectToken : Self.adobeSubjectToken, token))
            }
        }
        if let user = identity.serviceUser, !user.isEmpty {
            // The simulator's default issuer: the settings name no other.
            let key = Key(kind: .service, subject: user, scope: "")
            if let token = await token(for: key, logger: logger) {
                headers.append((Self.serviceToken, token))
            }
        }
        return headers
    }

    /// The token for `key`: the cached one while fresh, the one a concurrent caller is fetching, or a new one.
    func token(for key: Key, logger: Logger) async -> String? {
        switch entries[key] {
        case .pending(let task)?:
            return await task.value.token
        case .ready(let token, let refreshAt)? where now() < refreshAt:
            return token
        default:
            break
        }
        fetchCount += 1
        let pool = origin.map { connectionPools.commonPool(origin: $0) }
        let task = Task { [timeout, maxResponseBodyBytes, refreshMargin, failureBackoff, now] in
            await Self.fetch(
                key: key,
                pool: pool,
                timeout: timeout,
                maxResponseBodyBytes: maxResponseBodyBytes,
                refreshMargin: refreshMargin,
                failureBackoff: failureBackoff,
                now: now,
                logger: logger
            )
        }
        makeRoom()
        entries[key] = .pending(task)
        let fetched = await task.value
        entries[key] = .ready(token: fetched.token, refreshAt: fetched.refreshAt)
        return fetched.token
    }

    /// Number of cached (or pending) tokens.
    var count: Int { entries.count }

    /// Keeps the cache under `maxEntries`: stale entries go first, then those due for refresh soonest.
    private func makeRoom() {
        guard entries.count >= maxEntries else { return }
        let current = now()
        entries = entries.filter { _, entry in
            if case .ready(_, let refreshAt) = entry { return refreshAt > current }
            return true
        }
        // Fetches under way are never evicted: their callers store the result when it arrives.
        var ready: [(key: Key, refreshAt: Date)] = entries.compactMap { key, entry in
            if case .ready(_, let refreshAt) = entry { return (key, refreshAt) }
            return nil
        }
        let excess = entries.count - maxEntries + 1
        guard excess > 0 else { return }
        ready.sort { $0.refreshAt < $1.refreshAt }
        for victim in ready.prefix(excess) {
            entries[victim.key] = nil
        }
    }

    private static func fetch(
        key: Key,
        pool: KeepAliveConnectionPool?,
        timeout: Duration,
        maxResponseBodyBytes: Int,
        refreshMargin: TimeInterval,
        failureBackoff: TimeInterval,
        now: @Sendable () -> Date,
        logger: Logger
    ) async -> Fetched {
        let path: String
        var body: [String: String] = ["sub": key.subject]
        switch key.kind {
        case .platform:
            path = "/_sim/identity/platform-token"
            if !key.scope.isEmpty { body["did"] = key.scope }
        case .service:
            path = "/_sim/identity/service-token"
            if !key.scope.isEmpty { body["iss"] = key.scope }
        }
        var metadata: Logger.Metadata = ["sso.kind": "\(key.kind.rawValue)", "sso.sub": "\(key.subject)"]
        do {
            guard let pool else { throw FetchError(reason: "the backend URL is not http:// or https://") }
            let request = KeepAliveRequest(
                method: .POST,
                target: path,
                headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                body: ByteBuffer(string: JSONWriter.text(.object(body.mapValues(JSONValue.string))))
            )
            let response = try await pool.execute(request, deadline: .now() + TimeAmount(timeout), maxBodyBytes: maxResponseBodyBytes)
            guard response.status == 200, let body = response.body else {
                metadata["http.status"] = "\(response.status)"
                throw FetchError(reason: "identity service answered \(response.status)")
            }
            guard let token = JSONValue(parsing: body.readableBytesView)?["token"]?.stringValue, !token.isEmpty else {
                throw FetchError(reason: "identity service answer has no token")
            }
            guard let expiry = expiry(ofJWS: token) else {
                throw FetchError(reason: "identity token is not a JWS with exp")
            }
            // Reused until `refreshMargin` before exp; a token living less than twice the margin, for half its life.
            let fetchedAt = now()
            let remaining = expiry.timeIntervalSince(fetchedAt)
            let refreshAt = fetchedAt.addingTimeInterval(max(0, remaining - refreshMargin, remaining / 2))
            logger.debug("SSO identity token obtained", metadata: metadata)
            return Fetched(token: token, refreshAt: refreshAt)
        } catch {
            metadata["error"] = "\((error as? FetchError)?.reason ?? String(describing: error))"
            logger.warning("SSO identity token not obtained; calls go without it", metadata: metadata)
            return Fetched(token: nil, refreshAt: now().addingTimeInterval(failureBackoff))
        }
    }

    private struct FetchError: Error {
        var reason: String
    }

    /// The `exp` of a compact JWS's payload, read without verifying it (the client only needs to know when to ask
    /// again; the backend verifies).
    static func expiry(ofJWS token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
            let exp = JSONValue(parsing: data)?["exp"]?.doubleValue, exp.isFinite
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
