/// What a device asks of the Adobe Pass backend. The engine decides *what* to call; the
/// protocol client decides *how* (paths, headers, bodies, signing).
public enum BackendRequest: Sendable, Equatable {
    /// DCR `POST /o/client/register` with the application's software statement.
    case registerClient(softwareStatement: String)
    /// DCR `POST /o/client/token` (grant `client_credentials`).
    case obtainAccessToken(ClientCredentials)
    /// v2 `GET /api/v2/{sp}/configuration` (v1 `GET /api/v1/config/{requestor}`): the MVPD list.
    case configuration
    /// v2 `POST /api/v2/{sp}/sessions` (v1 `POST /reggie/v1/{requestor}/regcode`): a new code.
    case createSession(mvpd: String?)
    /// v2 `GET /api/v2/{sp}/profiles/code/{code}` (v1 `GET /api/v1/tokens/authn`): the poll.
    case pollProfile(code: String)

    /// Whether the call needs an access token (everything but DCR itself).
    public var isProtected: Bool {
        switch self {
        case .registerClient, .obtainAccessToken: false
        default: true
        }
    }

    /// A short stable name for logs, metrics and the poll log.
    public var name: String {
        switch self {
        case .registerClient: "register"
        case .obtainAccessToken: "token"
        case .configuration: "configuration"
        case .createSession: "sessions"
        case .pollProfile: "profiles.code"
        }
    }
}

/// Which Adobe Pass API a device speaks.
public enum APIProfile: String, Sendable, Codable, CaseIterable {
    /// REST API v2 with DCR (the default).
    case v2
    /// Legacy REST API v1 ("clientless", reggie regcodes).
    case v1
}

/// Everything the protocol client needs besides the request itself to build the HTTP call.
public struct RequestContext: Sendable, Equatable {
    public var profile: APIProfile
    /// The requestor id (v1) / service provider (v2).
    public var requestor: String
    /// The stable device id; sent base64-encoded (`AP-Device-Identifier: fingerprint …` / `deviceId`).
    public var deviceID: String
    /// `X-Device-Info`: base64 of the device-info JSON.
    public var deviceInfo: String
    /// DCR bearer token when the call is protected and one is held.
    public var accessToken: String?
    /// `AP-Visitor-Identifier` (from `setOptions`).
    public var visitorID: String?
    /// Public key and secret for the legacy v1 HMAC `Authorization` header (used when no bearer token).
    public var signingKeys: SigningKeys?

    public init(
        profile: APIProfile = .v2,
        requestor: String,
        deviceID: String,
        deviceInfo: String,
        accessToken: String? = nil,
        visitorID: String? = nil,
        signingKeys: SigningKeys? = nil
    ) {
        self.profile = profile
        self.requestor = requestor
        self.deviceID = deviceID
        self.deviceInfo = deviceInfo
        self.accessToken = accessToken
        self.visitorID = visitorID
        self.signingKeys = signingKeys
    }
}

/// The public key / secret pair of the legacy tvOS `setRequestor(…secret:publicKey:)`.
public struct SigningKeys: Sendable, Equatable, Codable {
    public var publicKey: String
    public var secret: String
    public init(publicKey: String, secret: String) {
        self.publicKey = publicKey
        self.secret = secret
    }
}

/// DCR client credentials: registered once per device and kept indefinitely.
public struct ClientCredentials: Sendable, Equatable, Codable {
    public var clientID: String
    public var clientSecret: String
    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

/// An MVPD as the configuration lists it and as `displayProviderDialog` reports it.
public struct MVPD: Sendable, Equatable, Codable {
    public var id: String
    public var displayName: String
    public var logoURL: String?
    public init(id: String, displayName: String, logoURL: String? = nil) {
        self.id = id
        self.displayName = displayName
        self.logoURL = logoURL
    }
}

/// A second-screen code as the backend issued it.
public struct IssuedCode: Sendable, Equatable, Codable {
    public var code: String
    /// End of validity, milliseconds since the Unix epoch (v2 `notAfter`, v1 `expires`).
    public var expiresEpochMs: Int64
    public var mvpd: String?
    public init(code: String, expiresEpochMs: Int64, mvpd: String?) {
        self.code = code
        self.expiresEpochMs = expiresEpochMs
        self.mvpd = mvpd
    }
}

/// An authenticated profile (v2) / AuthN token (v1).
public struct AuthProfile: Sendable, Equatable, Codable {
    public var mvpd: String
    public var userID: String?
    /// End of validity, milliseconds since the Unix epoch.
    public var expiresEpochMs: Int64
    public init(mvpd: String, userID: String?, expiresEpochMs: Int64) {
        self.mvpd = mvpd
        self.userID = userID
        self.expiresEpochMs = expiresEpochMs
    }
}

/// An Adobe Pass enhanced error (REST v2 always; v1 when enabled), or a DCR `{"error": …}` body.
public struct EnhancedError: Sendable, Equatable, Codable, Error {
    public var status: Int?
    public var code: String
    public var action: String?
    public var message: String?
    public var details: String?
    public var helpUrl: String?
    public var trace: String?
    public init(
        status: Int? = nil,
        code: String,
        action: String? = nil,
        message: String? = nil,
        details: String? = nil,
        helpUrl: String? = nil,
        trace: String? = nil
    ) {
        self.status = status
        self.code = code
        self.action = action
        self.message = message
        self.details = details
        self.helpUrl = helpUrl
        self.trace = trace
    }
}

/// The parsed outcome of one backend call.
public enum BackendResponse: Sendable, Equatable {
    case registered(ClientCredentials)
    /// `expiresIn` is the token's `expires_in`.
    case accessToken(token: String, expiresIn: Duration)
    case configuration(mvpds: [MVPD])
    case session(IssuedCode)
    /// `nil` while the code is still pending (v2 empty `profiles` map, v1 404).
    case profile(AuthProfile?)
}

/// Why a backend call did not produce a `BackendResponse`.
public enum BackendFailure: Sendable, Equatable, Error {
    /// An HTTP error status, with `Retry-After` (if any) and the parsed error body (if any).
    case http(status: Int, retryAfter: Duration?, error: EnhancedError?)
    /// Connection refused/reset/dropped, timeout, DNS: nothing usable came back.
    case transport(String)
    /// A 2xx whose body could not be understood.
    case malformed(status: Int, reason: String)

    /// The HTTP status, when there was one.
    public var httpStatus: Int? {
        switch self {
        case .http(let status, _, _), .malformed(let status, _): status
        case .transport: nil
        }
    }
}

/// Timing the I/O layer measured for a call, so the engine can record the poll log.
public struct RequestTiming<Instant: InstantProtocol & Sendable>: Sendable {
    public var sentAt: Instant
    public var latency: Duration
    public init(sentAt: Instant, latency: Duration) {
        self.sentAt = sentAt
        self.latency = latency
    }
}
