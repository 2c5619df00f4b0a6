/// Deliberate misbehaviour, to see how a server treats clients that break RFC 8628 §3.5.
package enum OAuthMisbehaviour: String, Sendable, Hashable, Codable, CaseIterable {
    case none
    /// `slow_down` is answered but the interval is kept.
    case ignoreSlowDown = "ignore-slow-down"
    /// Polls at half the interval in force.
    case tooFast = "too-fast"
}

/// What an OAuth device fleet is configured with, as stored with each device's settings: everything but the
/// secrets (``clientSecret`` and ``privateKeyPEM`` are never encoded; they come from the configuration at every
/// start, as the DCR software statement does).
package struct OAuthDeviceConfiguration: Sendable, Hashable, Codable {
    /// The provider's row of ``OAuthProviderRules/table``: paths, client authentication, quirks.
    package var provider: OAuthProvider = .generic
    /// Scheme, host, port (and any path prefix) endpoint paths are joined to; nil: the daemon's backend.
    package var issuer: String?
    /// Where the endpoints come from: nil reads the provider's discovery document (RFC 8414 or OpenID) when it
    /// publishes one, `off` uses ``endpoints`` and the row's paths, anything else is the document's URL or path.
    package var discovery: String?
    /// Endpoints given explicitly (absolute URLs, or paths joined to ``issuer``); they win over discovery.
    package var endpoints: [OAuthEndpoint: String] = [:]
    package var placeholders = OAuthPathPlaceholders()
    /// The client as the server knows it; the simulator's default client is public (`none`).
    package var clientID: String = OAuthDeviceConfiguration.defaultClientID
    /// Nil: the provider row's default.
    package var clientAuthentication: OAuthClientAuthentication?
    /// `private_key_jwt`: the key's algorithm (`ES256`, `RS256`) and `kid`.
    package var signingAlgorithm: String = "ES256"
    package var keyID: String?
    package var scope: String?
    /// Auth0's API identifier.
    package var audience: String?
    /// RFC 8707 resource indicator.
    package var resource: String?
    /// Use the access token while authorized (`userinfo` or `introspection`), every ``exerciseEveryMs``.
    package var exercise: OAuthEndpoint?
    package var exerciseEveryMs: Int64 = 60_000
    /// How long before the access token expires it is refreshed.
    package var refreshMarginMs: Int64 = 60_000
    package var misbehave: OAuthMisbehaviour = .none

    /// Secret of `client_secret_basic` / `client_secret_post`; never stored.
    package var clientSecret: String?
    /// PEM private key of `private_key_jwt`; never stored.
    package var privateKeyPEM: String?

    /// The client id pass-sim knows by default (a public client).
    package static let defaultClientID = "regcoded-tv"

    package init() {}

    private enum CodingKeys: String, CodingKey {
        case provider, issuer, discovery, endpoints, placeholders, clientID, clientAuthentication, signingAlgorithm, keyID
        case scope, audience, resource, exercise, exerciseEveryMs, refreshMarginMs, misbehave
    }

    /// Reads a stored configuration; keys an older version did not write keep their defaults.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        provider = try c.decodeIfPresent(OAuthProvider.self, forKey: .provider) ?? provider
        issuer = try c.decodeIfPresent(String.self, forKey: .issuer)
        discovery = try c.decodeIfPresent(String.self, forKey: .discovery)
        endpoints = try c.decodeIfPresent([OAuthEndpoint: String].self, forKey: .endpoints) ?? [:]
        placeholders = try c.decodeIfPresent(OAuthPathPlaceholders.self, forKey: .placeholders) ?? placeholders
        clientID = try c.decodeIfPresent(String.self, forKey: .clientID) ?? clientID
        clientAuthentication = try c.decodeIfPresent(OAuthClientAuthentication.self, forKey: .clientAuthentication)
        signingAlgorithm = try c.decodeIfPresent(String.self, forKey: .signingAlgorithm) ?? signingAlgorithm
        keyID = try c.decodeIfPresent(String.self, forKey: .keyID)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        audience = try c.decodeIfPresent(String.self, forKey: .audience)
        resource = try c.decodeIfPresent(String.self, forKey: .resource)
        exercise = try c.decodeIfPresent(OAuthEndpoint.self, forKey: .exercise)
        exerciseEveryMs = try c.decodeIfPresent(Int64.self, forKey: .exerciseEveryMs) ?? exerciseEveryMs
        refreshMarginMs = try c.decodeIfPresent(Int64.self, forKey: .refreshMarginMs) ?? refreshMarginMs
        misbehave = try c.decodeIfPresent(OAuthMisbehaviour.self, forKey: .misbehave) ?? misbehave
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(provider, forKey: .provider)
        try c.encodeIfPresent(issuer, forKey: .issuer)
        try c.encodeIfPresent(discovery, forKey: .discovery)
        if !endpoints.isEmpty { try c.encode(endpoints, forKey: .endpoints) }
        try c.encode(placeholders, forKey: .placeholders)
        try c.encode(clientID, forKey: .clientID)
        try c.encodeIfPresent(clientAuthentication, forKey: .clientAuthentication)
        try c.encode(signingAlgorithm, forKey: .signingAlgorithm)
        try c.encodeIfPresent(keyID, forKey: .keyID)
        try c.encodeIfPresent(scope, forKey: .scope)
        try c.encodeIfPresent(audience, forKey: .audience)
        try c.encodeIfPresent(resource, forKey: .resource)
        try c.encodeIfPresent(exercise, forKey: .exercise)
        try c.encode(exerciseEveryMs, forKey: .exerciseEveryMs)
        try c.encode(refreshMarginMs, forKey: .refreshMarginMs)
        try c.encode(misbehave, forKey: .misbehave)
    }
}

/// How a device logs in: Adobe Pass's registration code, or the OAuth 2.0 device authorization grant.
package enum DeviceProtocol: String, Sendable, Hashable, Codable, CaseIterable {
    /// Adobe Pass (REST API v2 or v1, as the fleet's `profile` says): the default.
    case adobePass = "adobe-pass"
    /// RFC 8628 against any authorization server (``OAuthDeviceConfiguration``).
    case oauthDevice = "oauth-device"
}
