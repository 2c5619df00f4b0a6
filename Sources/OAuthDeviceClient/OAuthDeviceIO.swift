import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// Identifies a request the machine sent, so its answer finds it (and a stale answer is recognised).
package struct OAuthRequestID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "#\(rawValue)" }
}

/// What a request is for.
package enum OAuthRequestPurpose: Sendable, Hashable {
    case discovery
    case deviceAuthorization
    case poll
    case refresh
    case revocation(OAuthTokenTypeHint)
    case exercise(OAuthEndpoint)
}

/// One HTTP header, in order (names are case-insensitive on the wire).
package struct OAuthHeader: Sendable, Hashable {
    package var name: String
    package var value: String
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One `application/x-www-form-urlencoded` member.
package struct OAuthFormField: Sendable, Hashable {
    package var name: String
    package var value: String
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A request described as data: the integrator turns it into an HTTP call and feeds the answer back with
/// ``OAuthDeviceMachine/handle(_:for:sentAt:)``. Headers and form carry credentials: never log them.
package struct OAuthRequest: Sendable, Hashable {
    package enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
    }

    package var id: OAuthRequestID
    package var purpose: OAuthRequestPurpose
    package var method: Method
    /// Absolute URL.
    package var url: String
    package var headers: [OAuthHeader]
    /// The form body of a POST (sent as `Content-Type: application/x-www-form-urlencoded`, which is in `headers`).
    package var form: [OAuthFormField]

    /// The encoded body; empty for a GET.
    package var body: Data {
        method == .get ? Data() : Data(FormEncoding.encode(form.map { ($0.name, $0.value) }).utf8)
    }

    /// The value of header `name`, case-insensitively.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The value of form member `name`.
    package func formValue(_ name: String) -> String? {
        form.first { $0.name == name }?.value
    }
}

/// An HTTP answer.
package struct OAuthHTTPResponse: Sendable, Hashable {
    package var status: Int
    package var headers: [OAuthHeader]
    package var body: Data

    package init(status: Int, headers: [OAuthHeader] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `Retry-After` in seconds (the HTTP-date form is not used by authorization servers).
    var retryAfter: Duration? {
        header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(max(0, $0)) }
    }
}

/// No HTTP answer: connection refused or reset, timeout, TLS failure.
package struct OAuthTransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}

/// The timers a machine arms; at most one of each.
package enum OAuthDeviceTimer: String, Sendable, Hashable, CaseIterable {
    /// The next poll.
    case poll
    /// The device code's `expires_in`.
    case codeExpiry
    /// The next try of a request that failed on the way (discovery, device authorization, refresh, revocation).
    case retry
    /// Refreshing before the access token expires.
    case refresh
    /// The next use of the access token.
    case exercise
}

/// What the machine asks its driver to do, in order.
package enum OAuthDeviceAction: Sendable, Hashable {
    case send(OAuthRequest)
    case schedule(OAuthDeviceTimer, at: DeviceInstant)
    case cancel(OAuthDeviceTimer)
    /// Store this; it comes before the events that announce the change.
    case persist(OAuthDeviceSnapshot)
    case emit(OAuthDeviceEvent)
    /// One answered (or abandoned) poll, for the poll log.
    case recordPoll(OAuthPollRecord)
}

/// The commands of a device.
package enum OAuthDeviceCommand: Sendable, Hashable {
    /// Starts a device authorization (ignored while one runs or tokens are held).
    case login
    /// Revokes the tokens the provider can revoke, then forgets them; a running login is cancelled.
    case logout
    /// Ends a running login (discovery, authorization, polling) without tokens.
    case cancel
}

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
    package var interval: Duration
    /// The provider's ready-made instruction (``OAuthProviderRules/messageField``).
    package var message: String?
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

/// One poll, as the poll log stores it.
package struct OAuthPollRecord: Sendable, Hashable {
    package var sentAt: DeviceInstant
    package var answeredAt: DeviceInstant
    package var sentEpochMs: Int64
    package var answeredEpochMs: Int64
    package var httpStatus: Int?
    package var outcome: OAuthPollOutcome
    /// The interval in force when the poll was sent (the server's plus every `slow_down`, whatever the device
    /// itself kept).
    package var interval: Duration
    /// Sent less than `interval` after the previous poll of the same code was sent.
    package var early: Bool
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
