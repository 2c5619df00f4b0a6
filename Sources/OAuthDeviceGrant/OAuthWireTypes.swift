import Foundation

/// The device authorization response (RFC 8628 §3.2).
///
/// Decoding accepts the verification URI under either name a provider uses (`verification_uri`, Google's
/// `verification_url`); encoding writes the name ``OAuthProviderRules/verificationURIField`` of the rules passed in
/// the encoder's `userInfo` (``OAuthDeviceAuthorizationResponse/encoded(for:)``), `verification_uri` without.
package struct OAuthDeviceAuthorizationResponse: Sendable, Hashable {
    package var deviceCode: String
    package var userCode: String
    package var verificationURI: String
    package var verificationURIComplete: String?
    /// Seconds until `device_code` and `user_code` expire.
    package var expiresIn: Int
    /// Seconds between polls; absent means 5 (RFC 8628 §3.2).
    package var interval: Int?
    /// A ready-made instruction for the user (Entra).
    package var message: String?

    package init(
        deviceCode: String,
        userCode: String,
        verificationURI: String,
        verificationURIComplete: String? = nil,
        expiresIn: Int,
        interval: Int? = nil,
        message: String? = nil
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
        self.message = message
    }

    /// JSON as the provider of `rules` writes it.
    package func encoded(for rules: OAuthProviderRules) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.userInfo[.oauthVerificationURIField] = rules.verificationURIField
        return try encoder.encode(self)
    }
}

extension CodingUserInfoKey {
    /// The member name the verification URI is written under (a `String`).
    package static let oauthVerificationURIField = CodingUserInfoKey(rawValue: "oauthVerificationURIField")!
}

extension OAuthDeviceAuthorizationResponse: Codable {
    private enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURL = "verification_url"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
        case message
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceCode = try c.decode(String.self, forKey: .deviceCode)
        userCode = try c.decode(String.self, forKey: .userCode)
        if let uri = try c.decodeIfPresent(String.self, forKey: .verificationURI) {
            verificationURI = uri
        } else {
            verificationURI = try c.decode(String.self, forKey: .verificationURL)
        }
        verificationURIComplete = try c.decodeIfPresent(String.self, forKey: .verificationURIComplete)
        expiresIn = try c.decodeLenientInt(forKey: .expiresIn)
        interval = try c.decodeLenientIntIfPresent(forKey: .interval)
        message = try c.decodeIfPresent(String.self, forKey: .message)
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(deviceCode, forKey: .deviceCode)
        try c.encode(userCode, forKey: .userCode)
        let field = encoder.userInfo[.oauthVerificationURIField] as? String
        try c.encode(verificationURI, forKey: field == CodingKeys.verificationURL.rawValue ? .verificationURL : .verificationURI)
        try c.encodeIfPresent(verificationURIComplete, forKey: .verificationURIComplete)
        try c.encode(expiresIn, forKey: .expiresIn)
        try c.encodeIfPresent(interval, forKey: .interval)
        try c.encodeIfPresent(message, forKey: .message)
    }
}

/// A successful token response (RFC 6749 §5.1; `id_token` from OIDC Core §3.1.3.3).
package struct OAuthTokenResponse: Sendable, Hashable, Codable {
    package var accessToken: String
    package var tokenType: String
    /// Seconds the access token lives; absent when the server does not say (GitHub's non-expiring tokens).
    package var expiresIn: Int?
    /// Absent on a refresh that does not rotate: the client keeps the one it has (RFC 6749 §6).
    package var refreshToken: String?
    package var scope: String?
    package var idToken: String?

    package init(
        accessToken: String,
        tokenType: String = "Bearer",
        expiresIn: Int? = nil,
        refreshToken: String? = nil,
        scope: String? = nil,
        idToken: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
    }

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case scope
        case idToken = "id_token"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try c.decode(String.self, forKey: .accessToken)
        tokenType = try c.decode(String.self, forKey: .tokenType)
        expiresIn = try c.decodeLenientIntIfPresent(forKey: .expiresIn)
        refreshToken = try c.decodeIfPresent(String.self, forKey: .refreshToken)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        idToken = try c.decodeIfPresent(String.self, forKey: .idToken)
    }
}

/// An error answer of a token endpoint (RFC 6749 §5.2), with the `interval` GitHub adds to `slow_down`.
package struct OAuthErrorResponse: Sendable, Hashable, Codable {
    package var error: OAuthTokenError
    package var errorDescription: String?
    package var errorURI: String?
    /// The interval to use from now on, in seconds (GitHub's `slow_down`; see
    /// ``OAuthProviderRules/slowDownNamesInterval``).
    package var interval: Int?

    package init(error: OAuthTokenError, errorDescription: String? = nil, errorURI: String? = nil, interval: Int? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
        self.interval = interval
    }

    private enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case errorURI = "error_uri"
        case interval
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        error = try c.decode(OAuthTokenError.self, forKey: .error)
        errorDescription = try c.decodeIfPresent(String.self, forKey: .errorDescription)
        errorURI = try c.decodeIfPresent(String.self, forKey: .errorURI)
        interval = try c.decodeLenientIntIfPresent(forKey: .interval)
    }
}

/// Authorization server metadata: the endpoint members of RFC 8414 §2, RFC 8628 §4's
/// `device_authorization_endpoint` and OIDC Discovery's `userinfo_endpoint`. Members this client does not use are
/// ignored when decoding.
package struct OAuthServerMetadata: Sendable, Hashable, Codable {
    package var issuer: String
    package var authorizationEndpoint: String?
    package var tokenEndpoint: String?
    package var deviceAuthorizationEndpoint: String?
    package var jwksURI: String?
    package var registrationEndpoint: String?
    package var revocationEndpoint: String?
    package var introspectionEndpoint: String?
    package var userinfoEndpoint: String?
    package var grantTypesSupported: [String]?
    package var tokenEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]?
    package var tokenEndpointAuthSigningAlgValuesSupported: [String]?
    package var revocationEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]?
    package var introspectionEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]?
    package var scopesSupported: [String]?

    package init(
        issuer: String,
        authorizationEndpoint: String? = nil,
        tokenEndpoint: String? = nil,
        deviceAuthorizationEndpoint: String? = nil,
        jwksURI: String? = nil,
        registrationEndpoint: String? = nil,
        revocationEndpoint: String? = nil,
        introspectionEndpoint: String? = nil,
        userinfoEndpoint: String? = nil,
        grantTypesSupported: [String]? = nil,
        tokenEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]? = nil,
        tokenEndpointAuthSigningAlgValuesSupported: [String]? = nil,
        revocationEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]? = nil,
        introspectionEndpointAuthMethodsSupported: [OAuthClientAuthenticationName]? = nil,
        scopesSupported: [String]? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.jwksURI = jwksURI
        self.registrationEndpoint = registrationEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.grantTypesSupported = grantTypesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.tokenEndpointAuthSigningAlgValuesSupported = tokenEndpointAuthSigningAlgValuesSupported
        self.revocationEndpointAuthMethodsSupported = revocationEndpointAuthMethodsSupported
        self.introspectionEndpointAuthMethodsSupported = introspectionEndpointAuthMethodsSupported
        self.scopesSupported = scopesSupported
    }

    private enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case jwksURI = "jwks_uri"
        case registrationEndpoint = "registration_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case introspectionEndpointAuthMethodsSupported = "introspection_endpoint_auth_methods_supported"
        case scopesSupported = "scopes_supported"
    }
}

/// A client authentication method as a metadata document names it: a known ``OAuthClientAuthentication`` or any
/// other registered name (`client_secret_jwt`, `tls_client_auth`, …), which must not fail the whole document.
package enum OAuthClientAuthenticationName: Sendable, Hashable, Codable {
    case known(OAuthClientAuthentication)
    case other(String)

    package init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        self = OAuthClientAuthentication(rawValue: name).map(Self.known) ?? .other(name)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .known(let method): try container.encode(method.rawValue)
        case .other(let name): try container.encode(name)
        }
    }
}

extension KeyedDecodingContainer {
    /// Seconds as a JSON number, or as a string of digits (some servers quote `expires_in`).
    fileprivate func decodeLenientIntIfPresent(forKey key: Key) throws -> Int? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int.self, forKey: key) { return value }
        if let value = try? decode(Double.self, forKey: key), value.isFinite { return Int(value) }
        let text = try decode(String.self, forKey: key)
        guard let value = Int(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "\(text) is not a number of seconds")
        }
        return value
    }

    fileprivate func decodeLenientInt(forKey key: Key) throws -> Int {
        guard let value = try decodeLenientIntIfPresent(forKey: key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "\(key.stringValue) is required"))
        }
        return value
    }
}
