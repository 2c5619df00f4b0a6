// What an OAuth device reports and keeps: its stages, failures, events and durable snapshot. They live here, with
// the grant's vocabulary, so that the engine's event and snapshot types can carry them without depending on the
// client's state machine.

/// The request that went wrong.
package enum OAuthStage: String, Sendable, Hashable, Codable {
    case configuration
    case discovery
    case deviceAuthorization
    case poll
    case refresh
    case revocation
    case exercise
}

/// Why a login or a grant ended in failure.
package struct OAuthFailure: Sendable, Hashable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable {
        /// The settings cannot work (a placeholder without value, an endpoint the provider lacks, a key that
        /// does not sign).
        case configuration(String)
        /// The server answered with an OAuth error that ends the stage.
        case tokenError(OAuthTokenError, description: String?)
        /// An HTTP status without a usable body, which a retry cannot fix.
        case httpStatus(Int)
        /// The answer could not be read.
        case malformed(String)
        /// Transport errors, 5xx or 429 until the retries ran out.
        case retriesExhausted(attempts: Int, last: String)
    }

    package var stage: OAuthStage
    package var reason: Reason

    package init(stage: OAuthStage, reason: Reason) {
        self.stage = stage
        self.reason = reason
    }

    package var description: String {
        switch reason {
        case .configuration(let text): "\(stage.rawValue): \(text)"
        case .tokenError(let error, let text): "\(stage.rawValue): \(error.code)" + (text.map { " (\($0))" } ?? "")
        case .httpStatus(let status): "\(stage.rawValue): HTTP \(status)"
        case .malformed(let text): "\(stage.rawValue): malformed answer: \(text)"
        case .retriesExhausted(let attempts, let last): "\(stage.rawValue): gave up after \(attempts) attempts (\(last))"
        }
    }
}

/// What the user is shown (RFC 8628 §3.3), with the code's lifetime and the interval the server asked for.
package struct OAuthUserCode: Sendable, Hashable {
    package var userCode: String
    package var verificationURI: String
    package var verificationURIComplete: String?
    package var expiresIn: Duration
    /// When the code expires, milliseconds since the Unix epoch.
    package var expiresEpochMs: Int64
    package var interval: Duration
    /// The provider's ready-made instruction (``OAuthProviderRules/messageField``).
    package var message: String?

    package init(
        userCode: String,
        verificationURI: String,
        verificationURIComplete: String?,
        expiresIn: Duration,
        expiresEpochMs: Int64,
        interval: Duration,
        message: String?
    ) {
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.expiresEpochMs = expiresEpochMs
        self.interval = interval
        self.message = message
    }
}

/// How one poll was answered.
package enum OAuthPollOutcome: Sendable, Hashable {
    case authorized
    case authorizationPending
    case slowDown
    case denied(OAuthTokenError)
    case expired(OAuthTokenError)
    /// Another OAuth error, which ends the login.
    case error(OAuthTokenError)
    /// 5xx or 429 without an OAuth error: backed off and polled again.
    case serverError(status: Int)
    /// Another status without an OAuth error, or an unreadable body: ends the login.
    case unexpected(status: Int)
    case transportFailure(String)
    /// The login ended (or was cancelled) while the poll was out: the answer was not acted on.
    case abandoned
}

/// The device's events, in RFC 8628's words. They carry no token: events are stored and published.
package enum OAuthDeviceEvent: Sendable, Hashable {
    /// The metadata document was read (RFC 8414 / OIDC Discovery).
    case discovered(issuer: String)
    /// The device shows the user code (RFC 8628 §3.3).
    case codeShown(OAuthUserCode)
    /// A poll was answered (RFC 8628 §3.4, §3.5).
    case poll(OAuthPollOutcome)
    /// `slow_down`: the interval the server asked for and the one the device now uses (the same unless it
    /// misbehaves).
    case slowedDown(requested: Duration, inForce: Duration)
    /// The device received its tokens (RFC 8628 §3.5 success).
    case authorized(scope: String?, expiresIn: Duration?, refreshable: Bool)
    /// The user refused (`access_denied`, or the provider's own code).
    case denied(OAuthTokenError)
    /// The device code expired before the user finished.
    case expired
    /// A refresh succeeded; `rotated` when the server issued a new refresh token (RFC 6749 §6).
    case tokenRefreshed(expiresIn: Duration?, rotated: Bool)
    /// A revocation was answered (RFC 7009 §2.2: 200 whether or not the token was valid).
    case revoked(OAuthTokenTypeHint, status: Int)
    /// The tokens are forgotten after a logout.
    case loggedOut
    /// The access token was used at userinfo or introspection: the HTTP status (nil: no answer) and, for
    /// introspection, whether the token was `active` (RFC 7662 §2.2).
    case tokenExercised(OAuthEndpoint, status: Int?, active: Bool?)
    /// A running login was cancelled.
    case cancelled
    case failed(OAuthFailure)
}

/// What survives a restart: the client the state belongs to, the resolved endpoints, the code being polled (with
/// its expiry and the interval after any `slow_down`), the tokens and their expiry. Times are epoch milliseconds:
/// instants do not survive a restart.
package struct OAuthDeviceSnapshot: Sendable, Hashable, Codable {
    package struct PendingCode: Sendable, Hashable, Codable {
        package var deviceCode: String
        package var userCode: String
        package var verificationURI: String
        package var verificationURIComplete: String?
        package var message: String?
        package var expiresEpochMs: Int64
        /// The interval in force after every `slow_down`.
        package var intervalMs: Int64
        /// The interval the device keeps (less than `intervalMs` only when it ignores `slow_down`).
        package var ownIntervalMs: Int64

        package init(
            deviceCode: String,
            userCode: String,
            verificationURI: String,
            verificationURIComplete: String?,
            message: String?,
            expiresEpochMs: Int64,
            intervalMs: Int64,
            ownIntervalMs: Int64
        ) {
            self.deviceCode = deviceCode
            self.userCode = userCode
            self.verificationURI = verificationURI
            self.verificationURIComplete = verificationURIComplete
            self.message = message
            self.expiresEpochMs = expiresEpochMs
            self.intervalMs = intervalMs
            self.ownIntervalMs = ownIntervalMs
        }
    }

    package struct Tokens: Sendable, Hashable, Codable {
        package var accessToken: String
        package var tokenType: String
        package var refreshToken: String?
        package var idToken: String?
        package var scope: String?
        /// Nil when the server named no lifetime.
        package var accessExpiresEpochMs: Int64?

        package init(
            accessToken: String,
            tokenType: String,
            refreshToken: String?,
            idToken: String?,
            scope: String?,
            accessExpiresEpochMs: Int64?
        ) {
            self.accessToken = accessToken
            self.tokenType = tokenType
            self.refreshToken = refreshToken
            self.idToken = idToken
            self.scope = scope
            self.accessExpiresEpochMs = accessExpiresEpochMs
        }
    }

    /// The client id the state was obtained with; a snapshot of another client is not resumed.
    package var clientID: String
    /// The endpoints the discovery document named (absolute URLs); nil until it was read.
    package var discovered: [OAuthEndpoint: String]?
    package var code: PendingCode?
    package var tokens: Tokens?

    package init(clientID: String) { self.clientID = clientID }
}
