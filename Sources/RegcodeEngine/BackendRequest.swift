import RegcodeSupport

/// What a device asks of the Adobe Pass backend. The engine decides *what* to call; the
/// protocol client decides *how* (paths, headers, bodies, signing).
package enum BackendRequest: Sendable, Equatable {
    /// DCR `POST /o/client/register` with the application's software statement.
    case registerClient(softwareStatement: String)
    /// DCR `POST /o/client/token` (grant `client_credentials`).
    case obtainAccessToken(ClientCredentials)
    /// v2 `GET /api/v2/{sp}/configuration` (v1 `GET /api/v1/config/{requestor}`): the MVPD list.
    case configuration
    /// v2 `POST /api/v2/{sp}/sessions` (v1 `POST /reggie/v1/{requestor}/regcode`): a new code.
    case createSession(mvpd: String?)
    /// v2 `GET /api/v2/{sp}/profiles/code/{code}` (v1 `GET /api/v1/tokens/authn`): the poll. `mvpd` is the
    /// code's MVPD, whose profile the client prefers when an answer carries several.
    case pollProfile(code: String, mvpd: String? = nil)
    /// v1 `GET /api/v1/checkauthn` (v2 `GET /api/v2/{sp}/profiles`): whether the backend holds a valid
    /// authentication for this device.
    case checkAuthentication
    /// v2 `GET /api/v2/{sp}/profiles/{mvpd}` (v1 `GET /api/v1/tokens/authn`): the profile the backend holds.
    case fetchProfile(mvpd: String)
    /// A native app's launch check: v2 `GET /api/v2/{sp}/profiles`, or `/profiles/{mvpd}` when the app knows its
    /// MVPD (REST v2 cookbook step 2): every profile the backend holds for the device.
    case launchProfiles(mvpd: String?)
    /// v2 `POST /api/v2/{sp}/decisions/authorize/{mvpd}` (v1 `GET /api/v1/authorize`).
    case authorize(mvpd: String, resource: String)
    /// v1 `GET /api/v1/tokens/media`: the short media token after a v1 authorization (v2 decisions carry it).
    case mediaToken(mvpd: String, resource: String)
    /// v2 `POST /api/v2/{sp}/decisions/preauthorize/{mvpd}` (v1 `GET /api/v1/preauthorize?resource=a,b`).
    case preauthorize(mvpd: String, resources: [String])
    /// v2 `GET /api/v2/{sp}/profiles/{mvpd}` attributes (v1 `GET /api/v1/tokens/usermetadata`).
    case userMetadata(mvpd: String)
    /// v2 `GET /api/v2/{sp}/logout/{mvpd}` (v1 `DELETE /api/v1/logout`).
    case logout(mvpd: String)
    /// Apple single sign-on, v2 `POST /api/v2/{sp}/sessions/sso/Apple` with the partner framework status:
    /// the SAML request to hand to the TV Provider (or a fallback to the code flow).
    case partnerSession(mvpd: String)
    /// v2 `POST /api/v2/{sp}/profiles/sso/Apple` with the SAML response: the `appleSSO` profile.
    case partnerProfile(samlResponse: String, mvpd: String)
    /// A request another protocol's state machine built whole (``WireRequest``): the OAuth device grant's.
    case wire(WireRequest)

    /// Whether the call needs an access token (everything but DCR itself).
    package var isProtected: Bool {
        switch self {
        case .registerClient, .obtainAccessToken, .wire: false
        default: true
        }
    }

    /// A short stable name for logs, metrics and the poll log.
    package var name: String {
        switch self {
        case .registerClient: "register"
        case .obtainAccessToken: "token"
        case .configuration: "configuration"
        case .createSession: "sessions"
        case .pollProfile: "profiles.code"
        case .checkAuthentication: "checkauthn"
        case .fetchProfile: "profiles.mvpd"
        case .launchProfiles(let mvpd): mvpd == nil ? "profiles" : "profiles.mvpd"
        case .authorize: "authorize"
        case .mediaToken: "tokens.media"
        case .preauthorize: "preauthorize"
        case .userMetadata: "usermetadata"
        case .logout: "logout"
        case .partnerSession: "sessions.sso"
        case .partnerProfile: "profiles.sso"
        case .wire(let request): request.name
        }
    }
}

/// Which Adobe Pass API a device speaks.
package enum APIProfile: String, Sendable, Codable, CaseIterable {
    /// REST API v2 with DCR (the default).
    case v2
    /// Legacy REST API v1 ("clientless", reggie regcodes).
    case v1
}

/// Everything the protocol client needs besides the request itself to build the HTTP call.
package struct RequestContext: Sendable, Equatable {
    package var profile: APIProfile
    /// The requestor id (v1) / service provider (v2).
    package var requestor: String
    /// The stable device id; sent base64-encoded (`AP-Device-Identifier: fingerprint …` / `deviceId`).
    package var deviceID: String
    /// `X-Device-Info`: base64 of the device-info JSON.
    package var deviceInfo: String
    /// DCR bearer token when the call is protected and one is held.
    package var accessToken: String?
    /// `AP-Visitor-Identifier` (from `setOptions`).
    package var visitorID: String?
    /// Public key and secret for the legacy v1 HMAC `Authorization` header (used when no bearer token).
    package var signingKeys: SigningKeys?
    /// Domain, redirect URLs and User-Agent the app presents.
    package var identity: ClientIdentity
    /// `X-Forwarded-For`: the device's client address, in the `forwarded-for` mode only.
    package var forwardedFor: String?
    /// The local address the call's connection is bound to, in the `bind` mode only.
    package var sourceAddress: String?
    /// REST v2 single sign-on identities to present (platform identity, service token).
    package var ssoIdentity: SSOIdentitySettings?
    /// `AP-Partner-Framework-Status` (Apple single sign-on): base64 JSON, when the app sends it.
    package var partnerFrameworkStatus: String?
    /// How the call is carried (the device's ``DeviceSettings/connections``); nil: the common pool.
    package var connections: ConnectionModel?
    /// `AP-TempPass-Identity` (promotional TempPass): base64 JSON of the user's identity, on calls for a TempPass MVPD.
    package var tempPassIdentity: String? = nil
    /// Which calls carry the device headers (the persona's ``PersonaRules/deviceHeaders``).
    package var deviceHeaders: DeviceHeaderPolicy = .oas
    /// Whether `Accept` and JSON bodies name `charset=utf-8` (the persona's ``PersonaRules/jsonCharset``).
    package var jsonCharset = false

    package init(
        profile: APIProfile = .v2,
        requestor: String,
        deviceID: String,
        deviceInfo: String,
        accessToken: String? = nil,
        visitorID: String? = nil,
        signingKeys: SigningKeys? = nil,
        identity: ClientIdentity = ClientIdentity(),
        forwardedFor: String? = nil,
        sourceAddress: String? = nil,
        ssoIdentity: SSOIdentitySettings? = nil,
        partnerFrameworkStatus: String? = nil,
        connections: ConnectionModel? = nil,
        deviceHeaders: DeviceHeaderPolicy = .oas,
        jsonCharset: Bool = false
    ) {
        self.profile = profile
        self.requestor = requestor
        self.deviceID = deviceID
        self.deviceInfo = deviceInfo
        self.accessToken = accessToken
        self.visitorID = visitorID
        self.signingKeys = signingKeys
        self.identity = identity
        self.forwardedFor = forwardedFor
        self.sourceAddress = sourceAddress
        self.ssoIdentity = ssoIdentity
        self.partnerFrameworkStatus = partnerFrameworkStatus
        self.connections = connections
        self.deviceHeaders = deviceHeaders
        self.jsonCharset = jsonCharset
    }
}

extension RequestContext: CustomStringConvertible, CustomReflectable {
    /// Names what the context carries without the bearer token or the signing secret.
    package var description: String {
        "RequestContext(profile: \(profile.rawValue), requestor: \(requestor), deviceID: \(deviceID), "
            + "accessToken: \(accessToken == nil ? "none" : "<redacted>"), signingKeys: \(signingKeys.map(\.description) ?? "none"))"
    }

    package var customMirror: Mirror { Mirror(reflecting: description) }
}

/// The public key / secret pair of the legacy tvOS `setRequestor(…secret:publicKey:)`.
///
/// Its description and mirror leave the secret out, so string interpolation, `dump` and test
/// failure messages cannot leak it.
package struct SigningKeys: Sendable, Equatable, Codable, CustomStringConvertible, CustomReflectable {
    package var publicKey: String
    package var secret: String
    package init(publicKey: String, secret: String) {
        self.publicKey = publicKey
        self.secret = secret
    }

    package var description: String { "SigningKeys(publicKey: \(publicKey), secret: <redacted>)" }
    package var customMirror: Mirror { Mirror(reflecting: description) }
}

/// DCR client credentials: registered once per device and kept indefinitely.
package struct ClientCredentials: Sendable, Equatable, Codable {
    package var clientID: String
    package var clientSecret: String
    package init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

/// An MVPD as the configuration lists it and as `displayProviderDialog` reports it.
///
/// The platform fields say how the MVPD takes part in a streaming platform's single sign-on (Apple TV
/// Provider on tvOS/iOS); they come from the v2 `/configuration` and the v1 MVPD list (DOC `[API-CONF]`,
/// `[V1-MVPD]`). Snapshots written before they existed decode with the defaults below.
package struct MVPD: Sendable, Equatable, Codable {
    /// `boardingStatus`: how far Apple onboarded the MVPD (AccessEnabler 2.2+; `nil` = not at all).
    package enum BoardingStatus: String, Sendable, Hashable, Codable {
        /// Fully supported by Apple: authentication uses Apple's single sign-on token.
        case supported = "SUPPORTED"
        /// Shown in Apple's picker, but the authentication flow is Adobe's (registration code on tvOS).
        case picker = "PICKER"
    }

    package var id: String
    package var displayName: String
    package var logoURL: String?
    /// The provider id Apple's VideoSubscriberAccount uses for this MVPD (`accountProviderIdentifier`).
    package var platformMappingId: String?
    /// `nil` when absent or a value this version does not know.
    package var boardingStatus: BoardingStatus?
    /// The MVPD supports the platform's single sign-on for this requestor.
    package var enablePlatformServices: Bool
    /// The MVPD may appear in the platform's picker even when not onboarded for single sign-on.
    package var displayInPlatformPicker: Bool
    /// The device must enforce the permissions the platform reports; `true` when the backend omits it
    /// (INFERRED: the safe reading of an absent flag).
    package var enforcePlatformPermissions: Bool
    /// A TempPass pseudo-MVPD (v2 configuration `isTempPass`): choosing it gives temporary access without
    /// an MVPD login. `displayProviderDialog` shows it as AccessEnabler's `MVPD.tempPass`.
    package var isTempPass: Bool

    package init(
        id: String,
        displayName: String,
        logoURL: String? = nil,
        platformMappingId: String? = nil,
        boardingStatus: BoardingStatus? = nil,
        enablePlatformServices: Bool = false,
        displayInPlatformPicker: Bool = false,
        enforcePlatformPermissions: Bool = true,
        isTempPass: Bool = false
    ) {
        self.id = id
        self.displayName = displayName
        self.logoURL = logoURL
        self.platformMappingId = platformMappingId
        self.boardingStatus = boardingStatus
        self.enablePlatformServices = enablePlatformServices
        self.displayInPlatformPicker = displayInPlatformPicker
        self.enforcePlatformPermissions = enforcePlatformPermissions
        self.isTempPass = isTempPass
    }

    private enum CodingKeys: String, CodingKey {
        case id, displayName, logoURL, platformMappingId, boardingStatus, enablePlatformServices,
            displayInPlatformPicker, enforcePlatformPermissions, isTempPass
    }

    /// Every platform field is optional, so that stored snapshots of older versions still decode; an
    /// unknown `boardingStatus` reads as `nil` rather than failing the whole snapshot.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        displayName = try container.decode(String.self, forKey: .displayName)
        logoURL = try container.decodeIfPresent(String.self, forKey: .logoURL)
        platformMappingId = try container.decodeIfPresent(String.self, forKey: .platformMappingId)
        boardingStatus = try container.decodeIfPresent(String.self, forKey: .boardingStatus)
            .flatMap(BoardingStatus.init(rawValue:))
        enablePlatformServices = try container.decodeIfPresent(Bool.self, forKey: .enablePlatformServices) ?? false
        displayInPlatformPicker = try container.decodeIfPresent(Bool.self, forKey: .displayInPlatformPicker) ?? false
        enforcePlatformPermissions =
            try container.decodeIfPresent(Bool.self, forKey: .enforcePlatformPermissions) ?? true
        isTempPass = try container.decodeIfPresent(Bool.self, forKey: .isTempPass) ?? false
    }
}

/// A second-screen code as the backend issued it.
package struct IssuedCode: Sendable, Equatable, Codable {
    package var code: String
    /// End of validity, milliseconds since the Unix epoch (v2 `notAfter`, v1 `expires`).
    package var expiresEpochMs: Int64
    package var mvpd: String?
    package init(code: String, expiresEpochMs: Int64, mvpd: String?) {
        self.code = code
        self.expiresEpochMs = expiresEpochMs
        self.mvpd = mvpd
    }
}

/// An authenticated profile (v2) / AuthN token (v1).
package struct AuthProfile: Sendable, Equatable, Codable {
    package var mvpd: String
    package var userID: String?
    /// End of validity, milliseconds since the Unix epoch.
    package var expiresEpochMs: Int64
    /// Apple when it was exchanged from the TV Provider account (`getMetadata` `tokenSource`).
    package var source: TokenSource
    /// The profile's `type` as the backend gave it (`regular`, `temporary`, `degraded`, single sign-on types).
    package var type: ProfileType
    package init(mvpd: String, userID: String?, expiresEpochMs: Int64, source: TokenSource = .adobe, type: ProfileType? = nil) {
        self.mvpd = mvpd
        self.userID = userID
        self.expiresEpochMs = expiresEpochMs
        self.source = source
        self.type = type ?? (source == .apple ? .appleSSO : .regular)
    }

    /// How the user got this authentication, as the soak report counts logins.
    package var loginKind: LoginKind { type.loginKind }

    private enum CodingKeys: String, CodingKey {
        case mvpd, userID, expiresEpochMs, source, type
    }

    /// Snapshots written before single sign-on have no source: Adobe.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            mvpd: try c.decode(String.self, forKey: .mvpd),
            userID: try c.decodeIfPresent(String.self, forKey: .userID),
            expiresEpochMs: try c.decode(Int64.self, forKey: .expiresEpochMs),
            source: try c.decodeIfPresent(TokenSource.self, forKey: .source) ?? .adobe,
            type: try c.decodeIfPresent(ProfileType.self, forKey: .type)
        )
    }
}

/// An Adobe Pass enhanced error (REST v2 always; v1 when enabled), or a DCR `{"error": …}` body.
package struct EnhancedError: Sendable, Equatable, Codable, Error {
    package var status: Int?
    package var code: String
    /// The remedy Adobe recommends (``ErrorAction``); nil for DCR errors and classic bodies that carry none.
    package var action: ErrorAction?
    package var message: String?
    package var details: String?
    package var helpUrl: String?
    package var trace: String?
    package init(
        status: Int? = nil,
        code: String,
        action: ErrorAction? = nil,
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

/// A short media token, as `setToken` hands it to the app.
package struct MediaToken: Sendable, Equatable {
    package var resource: String
    /// The serialized (Base64) token.
    package var serializedToken: String
    /// End of validity, milliseconds since the Unix epoch, when the backend said.
    package var expiresEpochMs: Int64?
    package init(resource: String, serializedToken: String, expiresEpochMs: Int64? = nil) {
        self.resource = resource
        self.serializedToken = serializedToken
        self.expiresEpochMs = expiresEpochMs
    }
}

/// The backend's authorization decision for one resource.
package struct AuthorizationDecision: Sendable, Equatable {
    package var resource: String
    package var authorized: Bool
    /// End of the authorization's validity (v2 decision `notAfter`, v1 AuthZ token `expires`).
    package var expiresEpochMs: Int64?
    /// The media token, when the decision carries one (v2); v1 fetches it with `tokens/media`.
    package var token: MediaToken?
    /// Why access was denied (the MVPD's `details` text among others).
    package var error: EnhancedError?
    /// Who decided (v2 `source`: the MVPD, a degradation rule, TempPass); nil when the answer did not say.
    package var source: DecisionSource?
    package init(
        resource: String,
        authorized: Bool,
        expiresEpochMs: Int64? = nil,
        token: MediaToken? = nil,
        error: EnhancedError? = nil,
        source: DecisionSource? = nil
    ) {
        self.resource = resource
        self.authorized = authorized
        self.expiresEpochMs = expiresEpochMs
        self.token = token
        self.error = error
        self.source = source
    }
}

/// User metadata of an authenticated user: values by name, and which of them are encrypted.
package struct UserMetadata: Sendable, Equatable {
    package var values: [String: JSONValue]
    /// Names whose value is encrypted with the programmer's key (v2 `state: "enc"`, v1 `encrypted` list).
    package var encrypted: Set<String>
    package init(values: [String: JSONValue] = [:], encrypted: Set<String> = []) {
        self.values = values
        self.encrypted = encrypted
    }
}

/// The parsed outcome of one backend call.
package enum BackendResponse: Sendable, Equatable {
    /// The answer to a ``BackendRequest/wire(_:)`` request, whatever its status.
    case wire(WireResponse)
    case registered(ClientCredentials)
    /// `expiresIn` is the token's `expires_in`.
    case accessToken(token: String, expiresIn: Duration)
    case configuration(mvpds: [MVPD])
    case session(IssuedCode)
    /// `sessions/sso/Apple` answered `partner_profile`: the SAML request for the TV Provider.
    case partnerAuthenticationRequest(request: String)
    /// A v2 sessions answer with `actionName: "authorize"`: the device already holds a profile for `mvpd`.
    case alreadyAuthenticated(mvpd: String)
    /// `nil` while the code is still pending (v2 empty `profiles` map, v1 404), or when no profile is held.
    case profile(AuthProfile?)
    /// The answer to `checkAuthentication` (v1 200 / 403).
    case authenticationStatus(Bool)
    /// Every profile the backend holds (a native app's launch check), in MVPD order; empty: signed out.
    case profiles([AuthProfile])
    /// An authorization decision (granted or denied; a denial is an answer, not a failure).
    case authorization(AuthorizationDecision)
    case mediaToken(MediaToken)
    /// One decision per resource, in the order the backend listed them.
    case preauthorization([AuthorizationDecision])
    /// `nil` when the backend holds no valid authentication (v2 empty `profiles`, v1 412).
    case userMetadata(UserMetadata?)
    case loggedOut
    /// v2 logout: what each MVPD asks the app to do (`{"logouts": {mvpd: {actionName, actionType, url}}}`).
    case logoutInstructions([LogoutInstruction])
}

/// One MVPD's answer to a v2 logout (Adobe's logout API page and logout flow page): what the app must do next.
package struct LogoutInstruction: Sendable, Equatable {
    /// `actionName`.
    package enum Action: Sendable, Equatable {
        /// Open `url` where the device has a browser; a TV without one "can stop the logout process".
        case logout
        /// Apple: the user signs out of the TV Provider in Settings → Accounts → TV Provider.
        case partnerLogout
        /// Done.
        case complete
        /// Nothing to log out.
        case invalid
        case other(String)

        package init(_ name: String) {
            switch name {
            case "logout": self = .logout
            case "partner_logout": self = .partnerLogout
            case "complete": self = .complete
            case "invalid": self = .invalid
            default: self = .other(name)
            }
        }

        package var name: String {
            switch self {
            case .logout: "logout"
            case .partnerLogout: "partner_logout"
            case .complete: "complete"
            case .invalid: "invalid"
            case .other(let name): name
            }
        }

        /// What a living-room app without a browser shows for it.
        package var shown: String {
            switch self {
            case .logout: "signed out here; the MVPD's logout page needs a browser, so the logout stops"
            case .partnerLogout: "sign out of your TV Provider in Settings, Accounts, TV Provider"
            case .complete: "signed out"
            case .invalid: "nothing to sign out of"
            case .other(let name): "unknown logout action \(name)"
            }
        }
    }

    package var mvpd: String
    package var action: Action
    package var actionType: String?
    package var url: String?

    package init(mvpd: String, action: Action, actionType: String? = nil, url: String? = nil) {
        self.mvpd = mvpd
        self.action = action
        self.actionType = actionType
        self.url = url
    }
}

/// Why a backend call did not produce a `BackendResponse`.
package enum BackendFailure: Sendable, Equatable, Error {
    /// An HTTP error status, with `Retry-After` (if any) and the parsed error body (if any).
    case http(status: Int, retryAfter: Duration?, error: EnhancedError?)
    /// Connection refused/reset/dropped, timeout, DNS, TLS: nothing usable came back. `code` names a cause an
    /// operator can act on (a refused certificate: `tls-untrusted-issuer`, …), stored as the request's error code.
    case transport(String, code: String? = nil)
    /// A 2xx whose body could not be understood.
    case malformed(status: Int, reason: String)

    /// The HTTP status, when there was one.
    package var httpStatus: Int? {
        switch self {
        case .http(let status, _, _), .malformed(let status, _): status
        case .transport: nil
        }
    }
}

/// Timing the I/O layer measured for a call, so the engine can record the poll log.
package struct RequestTiming: Sendable {
    package var sentAt: DeviceInstant
    package var latency: Duration
    package init(sentAt: DeviceInstant, latency: Duration) {
        self.sentAt = sentAt
        self.latency = latency
    }

    /// The latency in milliseconds, with its fraction.
    package var latencyMilliseconds: Double {
        let (seconds, attoseconds) = latency.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
