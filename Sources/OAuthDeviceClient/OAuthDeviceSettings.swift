import OAuthDeviceGrant
import RegcodeEngine

/// Where a device finds its endpoints.
package enum OAuthDiscoveryMode: Sendable, Hashable {
    /// Use the explicit endpoints, then the provider row's default paths.
    case off
    /// Fetch the provider row's discovery document (RFC 8414 or OIDC) once per device before its first login.
    case provider
    /// Fetch this document (an absolute URL, or a path joined to the base URL).
    case url(String)
}

/// Using the access token while authorized, as an app would.
package struct OAuthTokenExercise: Sendable, Hashable {
    /// `.userinfo` (GET with the bearer token) or `.introspection` (RFC 7662 POST with client authentication).
    package var endpoint: OAuthEndpoint
    package var every: Duration

    package init(endpoint: OAuthEndpoint, every: Duration) {
        self.endpoint = endpoint
        self.every = every
    }
}

/// The client as the authorization server knows it.
package struct OAuthClientCredentials: Sendable {
    package var id: String
    package var secret: String?
    /// For `private_key_jwt`.
    package var signingKey: OAuthSigningKey?
    /// Nil: the provider row's default.
    package var authentication: OAuthClientAuthentication?

    package init(id: String, secret: String? = nil, signingKey: OAuthSigningKey? = nil, authentication: OAuthClientAuthentication? = nil) {
        self.id = id
        self.secret = secret
        self.signingKey = signingKey
        self.authentication = authentication
    }
}

/// Everything one OAuth device is configured with. Differences between providers come from ``rules`` (a row of
/// ``OAuthProviderRules/table``); everything else here is the device's own choice.
package struct OAuthDeviceSettings: Sendable {
    /// The provider's row; ``init(provider:baseURL:client:)`` takes it from the table.
    package var rules: OAuthProviderRules
    /// Scheme, host and port (and any path prefix) that endpoint paths are joined to.
    package var baseURL: String
    package var placeholders = OAuthPathPlaceholders()
    package var discovery: OAuthDiscoveryMode = .off
    /// Endpoints given explicitly (absolute URLs, or paths joined to the base URL); they win over discovery and the
    /// row's defaults.
    package var endpoints: [OAuthEndpoint: String] = [:]
    package var client: OAuthClientCredentials
    package var scope: String?
    /// Auth0's API identifier.
    package var audience: String?
    /// RFC 8707 resource indicator.
    package var resource: String?
    package var exercise: OAuthTokenExercise?
    /// How long before the access token expires it is refreshed.
    package var refreshMargin: Duration = .seconds(60)
    package var misbehaviour: OAuthMisbehaviour = .none
    /// Back-off of transport errors and 5xx answers: `backoffCap` bounds the waits between polls (whose base is the
    /// interval in force), `stageRetries` / `stageBackoffBase` / `stageBackoffCap` bound the other requests, `jitter`
    /// spreads polls upwards only (never earlier than the interval), `maxConsecutiveErrors` ends a login.
    package var retry = PollPolicy()
    /// Lifetime of a `private_key_jwt` assertion.
    package var assertionLifetime: Duration = .seconds(60)

    package init(provider: OAuthProvider, baseURL: String, client: OAuthClientCredentials) {
        self.rules = provider.rules
        self.baseURL = baseURL
        self.client = client
        if provider.rules.discoveryPath != nil { discovery = .provider }
    }

    /// The client authentication in use.
    package var clientAuthentication: OAuthClientAuthentication {
        client.authentication ?? rules.defaultClientAuthentication
    }

    /// Problems with the settings, as readable reasons (empty when valid).
    package func validationErrors() -> [String] {
        var errors: [String] = []
        if client.id.isEmpty { errors.append("the client id is empty") }
        switch clientAuthentication {
        case .none: break
        case .clientSecretBasic, .clientSecretPost:
            if client.secret?.isEmpty ?? true { errors.append("\(clientAuthentication.rawValue) needs a client secret") }
        case .privateKeyJWT:
            if client.signingKey == nil { errors.append("private_key_jwt needs a private key") }
        }
        if !rules.supportedClientAuthentication.contains(clientAuthentication) {
            errors.append("\(rules.provider.rawValue) does not document \(clientAuthentication.rawValue)")
        }
        if case .provider = discovery, rules.discoveryPath == nil {
            errors.append("\(rules.provider.rawValue) publishes no discovery document")
        }
        if let exercise {
            if ![.userinfo, .introspection].contains(exercise.endpoint) {
                errors.append("a token is exercised at userinfo or introspection, not \(exercise.endpoint.rawValue)")
            }
            if exercise.every <= .zero { errors.append("the exercise period must be positive") }
        }
        if refreshMargin < .zero { errors.append("the refresh margin must not be negative") }
        if assertionLifetime <= .zero { errors.append("the assertion lifetime must be positive") }
        return errors
    }
}
