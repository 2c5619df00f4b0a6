import OAuthDeviceGrant
import RegcodeSupport

/// An OAuth device's events on the wire: `oauth.…` names, arguments in RFC 8628's words (snake case, seconds).
extension OAuthDeviceEvent {
    /// The events by kind: the one list of them, which the reference page is generated from.
    package enum Kind: String, Sendable, CaseIterable {
        case discovered, codeShown, poll, slowedDown, authorized, denied, expired, tokenRefreshed, revoked, loggedOut
        case tokenExercised, cancelled, failed

        /// When the event comes, and what it carries.
        package var summary: String {
            switch self {
            case .discovered: "The metadata document was read (RFC 8414 / OpenID Connect Discovery): `{issuer}`."
            case .codeShown:
                "The device shows its code (RFC 8628 §3.2): `{user_code, verification_uri, verification_uri_complete, expires_in, expires_at, interval, message}`; `expires_at` in epoch ms, `message` only where the provider sends one."
            case .poll:
                "A poll of the token endpoint was answered (§3.4, §3.5): `{result, error, status}`; `result` is `authorized`, `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, `error`, `server_error`, `unexpected`, `transport_failure` or `abandoned`."
            case .slowedDown:
                "`slow_down`: `{interval, in_force}` in seconds, what the server now asks and what the device keeps (the same unless it ignores `slow_down` on purpose)."
            case .authorized: "Tokens issued: `{scope, expires_in, refreshable}` (never a token)."
            case .denied: "The user refused: `{error}` (`access_denied`, or the provider's own code)."
            case .expired: "The device code expired before the user finished: `{}`."
            case .tokenRefreshed: "A refresh succeeded (RFC 6749 §6): `{expires_in, rotated}`."
            case .revoked: "A revocation was answered (RFC 7009): `{token_type_hint, status}`."
            case .loggedOut: "The tokens are forgotten after a logout: `{}`."
            case .tokenExercised: "The access token was used: `{endpoint: userinfo|introspection, status, active}`."
            case .cancelled: "A running login was cancelled: `{}`."
            case .failed: "A login or grant ended in failure: `{stage, reason}`."
            }
        }
    }

    package var kind: Kind {
        switch self {
        case .discovered: .discovered
        case .codeShown: .codeShown
        case .poll: .poll
        case .slowedDown: .slowedDown
        case .authorized: .authorized
        case .denied: .denied
        case .expired: .expired
        case .tokenRefreshed: .tokenRefreshed
        case .revoked: .revoked
        case .loggedOut: .loggedOut
        case .tokenExercised: .tokenExercised
        case .cancelled: .cancelled
        case .failed: .failed
        }
    }

    /// The event's name on the wire.
    package var name: String { "oauth." + kind.rawValue }

    /// The event's arguments on the wire.
    package var args: [String: JSONValue] {
        switch self {
        case .discovered(let issuer):
            return ["issuer": .string(issuer)]
        case .codeShown(let shown):
            return [
                "user_code": .string(shown.userCode), "verification_uri": .string(shown.verificationURI),
                "verification_uri_complete": shown.verificationURIComplete.map(JSONValue.string) ?? .null,
                "expires_in": Self.seconds(shown.expiresIn), "expires_at": .int(shown.expiresEpochMs),
                "interval": Self.seconds(shown.interval), "message": shown.message.map(JSONValue.string) ?? .null,
            ]
        case .poll(let outcome):
            return outcome.wire
        case .slowedDown(let requested, let inForce):
            return ["interval": Self.seconds(requested), "in_force": Self.seconds(inForce)]
        case .authorized(let scope, let expiresIn, let refreshable):
            return [
                "scope": scope.map(JSONValue.string) ?? .null, "expires_in": expiresIn.map(Self.seconds) ?? .null,
                "refreshable": .bool(refreshable),
            ]
        case .denied(let error):
            return ["error": .string(error.code)]
        case .expired, .loggedOut, .cancelled:
            return [:]
        case .tokenRefreshed(let expiresIn, let rotated):
            return ["expires_in": expiresIn.map(Self.seconds) ?? .null, "rotated": .bool(rotated)]
        case .revoked(let hint, let status):
            return ["token_type_hint": .string(hint.rawValue), "status": .int(Int64(status))]
        case .tokenExercised(let endpoint, let status, let active):
            return [
                "endpoint": .string(endpoint.rawValue), "status": status.map { .int(Int64($0)) } ?? .null,
                "active": active.map(JSONValue.bool) ?? .null,
            ]
        case .failed(let failure):
            return ["stage": .string(failure.stage.rawValue), "reason": .string(failure.description)]
        }
    }

    /// Whole seconds as an integer, else a fraction.
    static func seconds(_ duration: Duration) -> JSONValue {
        let milliseconds = duration.milliseconds
        return milliseconds % 1000 == 0 ? .int(milliseconds / 1000) : .double(Double(milliseconds) / 1000)
    }
}

extension OAuthPollOutcome {
    /// `{result, error, status}` of an `oauth.poll` event.
    var wire: [String: JSONValue] {
        var object: [String: JSONValue]
        switch self {
        case .authorized: object = ["result": .string("authorized")]
        case .authorizationPending: object = ["result": .string("authorization_pending")]
        case .slowDown: object = ["result": .string("slow_down")]
        case .denied(let error): object = ["result": .string("access_denied"), "error": .string(error.code)]
        case .expired(let error): object = ["result": .string("expired_token"), "error": .string(error.code)]
        case .error(let error): object = ["result": .string("error"), "error": .string(error.code)]
        case .serverError(let status): object = ["result": .string("server_error"), "status": .int(Int64(status))]
        case .unexpected(let status): object = ["result": .string("unexpected"), "status": .int(Int64(status))]
        case .transportFailure(let reason): object = ["result": .string("transport_failure"), "error": .string(reason)]
        case .abandoned: object = ["result": .string("abandoned")]
        }
        return object
    }
}
