/// The grant types this package sends to a token endpoint.
package enum OAuthGrantType: String, Sendable, Hashable, Codable, CaseIterable {
    /// RFC 8628 §3.4: polling the token endpoint with a device code.
    case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
    /// RFC 6749 §6.
    case refreshToken = "refresh_token"
}

/// How a client proves who it is to the token, revocation and introspection endpoints (the names of RFC 8414 §2
/// `token_endpoint_auth_methods_supported`, from the OAuth registry).
package enum OAuthClientAuthentication: String, Sendable, Hashable, Codable, CaseIterable {
    /// A public client: `client_id` in the form body, no secret (RFC 6749 §2.1).
    case none
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// `client_id` and `client_secret` in the form body (RFC 6749 §2.3.1).
    case clientSecretPost = "client_secret_post"
    /// A signed JWT as `client_assertion` (RFC 7523 §2.2, OIDC Core §9).
    case privateKeyJWT = "private_key_jwt"

    /// The `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2).
    package static let jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
}

/// Which token a revocation or introspection request names (`token_type_hint`, RFC 7009 §2.1).
package enum OAuthTokenTypeHint: String, Sendable, Hashable, Codable, CaseIterable {
    case accessToken = "access_token"
    case refreshToken = "refresh_token"
}

/// The form parameter names both sides use, so the client and the simulator cannot spell one differently.
package enum OAuthParameter {
    package static let clientID = "client_id"
    package static let clientSecret = "client_secret"
    package static let clientAssertion = "client_assertion"
    package static let clientAssertionType = "client_assertion_type"
    package static let scope = "scope"
    /// Auth0's API identifier on the device authorization request.
    package static let audience = "audience"
    /// RFC 8707 resource indicator.
    package static let resource = "resource"
    package static let grantType = "grant_type"
    package static let deviceCode = "device_code"
    package static let refreshToken = "refresh_token"
    /// RFC 7009 §2.1 / RFC 7662 §2.1.
    package static let token = "token"
    package static let tokenTypeHint = "token_type_hint"
}

/// An error code of a token endpoint answer: RFC 6749 §5.2 and RFC 8628 §3.5, and any other a server sends.
package enum OAuthTokenError: Sendable, Hashable, CustomStringConvertible {
    // RFC 6749 §5.2.
    case invalidRequest
    case invalidClient
    case invalidGrant
    case unauthorizedClient
    case unsupportedGrantType
    case invalidScope
    // RFC 8628 §3.5.
    /// The user has not finished yet: keep polling at the interval.
    case authorizationPending
    /// Keep polling, 5 s slower from now on.
    case slowDown
    /// The user refused: the login ends.
    case accessDenied
    /// The device code expired: the login ends.
    case expiredToken
    /// A code neither RFC defines (GitHub's `incorrect_client_credentials`, `device_flow_disabled`, …).
    case other(String)

    package init(code: String) {
        switch code {
        case "invalid_request": self = .invalidRequest
        case "invalid_client": self = .invalidClient
        case "invalid_grant": self = .invalidGrant
        case "unauthorized_client": self = .unauthorizedClient
        case "unsupported_grant_type": self = .unsupportedGrantType
        case "invalid_scope": self = .invalidScope
        case "authorization_pending": self = .authorizationPending
        case "slow_down": self = .slowDown
        case "access_denied": self = .accessDenied
        case "expired_token": self = .expiredToken
        default: self = .other(code)
        }
    }

    /// The code on the wire.
    package var code: String {
        switch self {
        case .invalidRequest: "invalid_request"
        case .invalidClient: "invalid_client"
        case .invalidGrant: "invalid_grant"
        case .unauthorizedClient: "unauthorized_client"
        case .unsupportedGrantType: "unsupported_grant_type"
        case .invalidScope: "invalid_scope"
        case .authorizationPending: "authorization_pending"
        case .slowDown: "slow_down"
        case .accessDenied: "access_denied"
        case .expiredToken: "expired_token"
        case .other(let code): code
        }
    }

    package var description: String { code }
}

extension OAuthTokenError: Codable {
    package init(from decoder: any Decoder) throws {
        self.init(code: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }
}
