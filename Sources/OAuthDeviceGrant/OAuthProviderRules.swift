import Foundation

/// The authorization servers a device can log in with (`provider:` in configuration).
package enum OAuthProvider: String, Sendable, Hashable, Codable, CaseIterable {
    /// Any RFC 8628 server, as the RFCs describe it.
    case generic
    case keycloak
    /// Microsoft Entra ID (the Microsoft identity platform).
    case entra
    case google
    case okta
    case auth0
    case github
    /// django-oauth-toolkit 3.x (a Django app's own authorization server).
    case djangoOAuthToolkit = "django-oauth-toolkit"

    /// This provider's row of ``OAuthProviderRules/table``.
    package var rules: OAuthProviderRules { OAuthProviderRules.rules(for: self) }
}

/// The endpoints a device uses.
package enum OAuthEndpoint: String, Sendable, Hashable, Codable, CodingKeyRepresentable, CaseIterable {
    case deviceAuthorization
    case token
    case revocation
    case userinfo
    case introspection
}

/// Default endpoint paths of a provider. Paths, not URLs: they are joined to the configured base URL, so a device
/// pointed at a local simulator never leaves it. Templates may carry `{tenant}` and `{realm}`.
package struct OAuthEndpointPaths: Sendable, Hashable {
    package var deviceAuthorization: String
    package var token: String
    /// RFC 7009; nil where the provider has none.
    package var revocation: String?
    package var userinfo: String?
    /// RFC 7662; nil where the provider has none.
    package var introspection: String?

    package init(deviceAuthorization: String, token: String, revocation: String?, userinfo: String?, introspection: String?) {
        self.deviceAuthorization = deviceAuthorization
        self.token = token
        self.revocation = revocation
        self.userinfo = userinfo
        self.introspection = introspection
    }

    package subscript(endpoint: OAuthEndpoint) -> String? {
        switch endpoint {
        case .deviceAuthorization: deviceAuthorization
        case .token: token
        case .revocation: revocation
        case .userinfo: userinfo
        case .introspection: introspection
        }
    }
}

/// The values of a path template's placeholders.
package struct OAuthPathPlaceholders: Sendable, Hashable, Codable {
    /// Entra's `{tenant}` (a tenant id, `common`, `organizations` or `consumers`).
    package var tenant: String?
    /// Keycloak's `{realm}`.
    package var realm: String?

    package init(tenant: String? = nil, realm: String? = nil) {
        self.tenant = tenant
        self.realm = realm
    }

    /// A placeholder a template names but no value was given for.
    package struct Missing: Error, Hashable, CustomStringConvertible {
        package var placeholder: String
        package var template: String
        package var description: String { "\(template) needs a value for {\(placeholder)}" }
    }

    /// `template` with its placeholders replaced.
    package func resolve(_ template: String) throws(Missing) -> String {
        var path = template
        for (name, value) in [("tenant", tenant), ("realm", realm)] where path.contains("{\(name)}") {
            guard let value, !value.isEmpty else { throw Missing(placeholder: name, template: template) }
            path = path.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return path
    }
}

/// How one provider differs from the RFCs: one value per provider, in ``table``. The client and the simulator both
/// read these rows, so what the one expects and the other sends cannot drift apart.
///
/// Every claim cites the provider's documentation beside its row; claims that could not be confirmed there say so.
package struct OAuthProviderRules: Sendable, Hashable {
    package var provider: OAuthProvider
    /// The metadata document's path: RFC 8414 `/.well-known/oauth-authorization-server` or OIDC
    /// `/.well-known/openid-configuration` (a template); nil where the provider publishes none.
    package var discoveryPath: String?
    package var endpoints: OAuthEndpointPaths
    /// The member naming the verification URI in the device authorization response.
    package var verificationURIField: String
    /// Whether the device authorization response carries `verification_uri_complete`.
    package var sendsVerificationURIComplete: Bool
    /// The HTTP status of an error answer on the token endpoint (RFC 6749 §5.2: 400); 200 means the error is a member
    /// of a successful answer (GitHub).
    package var tokenErrorStatus: Int
    /// Errors answered with another status than ``tokenErrorStatus``.
    package var tokenErrorStatusOverrides: [OAuthTokenError: Int]
    /// Whether a `slow_down` answer names the interval to use from now on (`interval`), rather than leaving the
    /// client to add 5 s (RFC 8628 §3.5).
    package var slowDownNamesInterval: Bool
    /// Whether a poll of an expired code answers `expired_token` once, then `invalid_grant` (Auth0).
    package var expiredCodeRepeatsAsInvalidGrant: Bool
    /// Error codes that mean the user refused (RFC 8628 `access_denied`, plus the provider's own).
    package var denialErrors: Set<OAuthTokenError>
    /// Whether requests must carry `Accept: application/json` to be answered in JSON (GitHub answers form-encoded
    /// otherwise).
    package var requiresAcceptJSON: Bool
    /// The member of the device authorization response holding a ready-made instruction for the user.
    package var messageField: String?
    /// The poll interval when the server names none (RFC 8628 §3.2: 5 s).
    package var defaultInterval: Duration
    package var supportedClientAuthentication: [OAuthClientAuthentication]
    package var defaultClientAuthentication: OAuthClientAuthentication
    /// The tokens the revocation endpoint takes, in the order a logout revokes them (RFC 7009 §2.1: refresh token
    /// first, which on most servers also invalidates the access tokens issued with it).
    package var revocableTokens: [OAuthTokenTypeHint]
    /// The documentation the row was checked against.
    package var documentation: [String]
    /// Claims of the row the documentation did not confirm.
    package var unconfirmed: [String]

    /// The status an error answer of the token endpoint carries.
    package func tokenErrorStatus(for error: OAuthTokenError) -> Int {
        tokenErrorStatusOverrides[error] ?? tokenErrorStatus
    }

    /// The path of `endpoint` with its placeholders filled; nil when the provider has no such endpoint.
    package func path(_ endpoint: OAuthEndpoint, placeholders: OAuthPathPlaceholders) throws(OAuthPathPlaceholders.Missing) -> String? {
        guard let template = endpoints[endpoint] else { return nil }
        return try placeholders.resolve(template)
    }

    /// The discovery document's path with its placeholders filled; nil when the provider publishes none.
    package func discoveryPath(placeholders: OAuthPathPlaceholders) throws(OAuthPathPlaceholders.Missing) -> String? {
        guard let discoveryPath else { return nil }
        return try placeholders.resolve(discoveryPath)
    }

    package static func rules(for provider: OAuthProvider) -> OAuthProviderRules {
        guard let row = table.first(where: { $0.provider == provider }) else {
            preconditionFailure("OAuthProviderRules.table has no row for \(provider)")
        }
        return row
    }

    /// The RFCs' defaults, which every row starts from.
    private static func rfc(_ provider: OAuthProvider, endpoints: OAuthEndpointPaths) -> OAuthProviderRules {
        OAuthProviderRules(
            provider: provider,
            discoveryPath: "/.well-known/oauth-authorization-server",
            endpoints: endpoints,
            verificationURIField: "verification_uri",
            sendsVerificationURIComplete: true,
            tokenErrorStatus: 400,
            tokenErrorStatusOverrides: [:],
            slowDownNamesInterval: false,
            expiredCodeRepeatsAsInvalidGrant: false,
            denialErrors: [.accessDenied],
            requiresAcceptJSON: false,
            messageField: nil,
            defaultInterval: .seconds(5),
            supportedClientAuthentication: OAuthClientAuthentication.allCases,
            defaultClientAuthentication: .none,
            revocableTokens: [.refreshToken, .accessToken],
            documentation: [],
            unconfirmed: []
        )
    }

    /// One row per provider.
    package static let table: [OAuthProviderRules] = [generic, keycloak, entra, google, okta, auth0, github, djangoOAuthToolkit]

    // RFC 8628, RFC 8414, RFC 6749, RFC 7009, RFC 7662. The RFCs fix no endpoint paths; these are the simulator's.
    // https://www.rfc-editor.org/rfc/rfc8628 §3.2 (interval default 5 s), §3.5 (errors, slow_down +5 s)
    // https://www.rfc-editor.org/rfc/rfc8414 §3 (/.well-known/oauth-authorization-server)
    private static let generic: OAuthProviderRules = {
        var row = rfc(
            .generic,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/device_authorization",
                token: "/token",
                revocation: "/revoke",
                userinfo: "/userinfo",
                introspection: "/introspect"
            )
        )
        row.documentation = ["https://www.rfc-editor.org/rfc/rfc8628", "https://www.rfc-editor.org/rfc/rfc8414"]
        return row
    }()

    // Keycloak: endpoints under /realms/{realm}/protocol/openid-connect, OIDC discovery under the realm.
    // https://www.keycloak.org/docs/latest/securing_apps/#available-endpoints (well-known, token, userinfo, revoke
    // "OAuth 2.0 Token Revocation described in RFC7009", introspection)
    private static let keycloak: OAuthProviderRules = {
        var row = rfc(
            .keycloak,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/realms/{realm}/protocol/openid-connect/auth/device",
                token: "/realms/{realm}/protocol/openid-connect/token",
                revocation: "/realms/{realm}/protocol/openid-connect/revoke",
                userinfo: "/realms/{realm}/protocol/openid-connect/userinfo",
                introspection: "/realms/{realm}/protocol/openid-connect/token/introspect"
            )
        )
        row.discoveryPath = "/realms/{realm}/.well-known/openid-configuration"
        row.documentation = ["https://www.keycloak.org/docs/latest/securing_apps/#available-endpoints"]
        row.unconfirmed = [
            "the device authorization path /auth/device (taken from Keycloak's discovery document, not found in the docs searched)",
            "verification_uri_complete in the device authorization response",
        ]
        return row
    }()

    // Microsoft Entra ID: /{tenant}/oauth2/v2.0/devicecode and /token; the response has a human `message`, no
    // `verification_uri_complete` ("not included or supported at this time"); public clients only (MSAL: "Device Code
    // Flow is only available for public client applications"); no RFC 7009 revocation or RFC 7662 introspection
    // endpoint. Userinfo is Graph's /oidc/userinfo (host graph.microsoft.com).
    // https://learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code
    // https://learn.microsoft.com/entra/msal/java/getting-started/device-code-flow
    // https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc (discovery under /{tenant}/v2.0)
    private static let entra: OAuthProviderRules = {
        var row = rfc(
            .entra,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/{tenant}/oauth2/v2.0/devicecode",
                token: "/{tenant}/oauth2/v2.0/token",
                revocation: nil,
                userinfo: "/oidc/userinfo",
                introspection: nil
            )
        )
        row.discoveryPath = "/{tenant}/v2.0/.well-known/openid-configuration"
        row.sendsVerificationURIComplete = false
        row.messageField = "message"
        row.denialErrors = [.accessDenied, .other("authorization_declined")]
        row.supportedClientAuthentication = [.none]
        row.revocableTokens = []
        row.documentation = [
            "https://learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code",
            "https://learn.microsoft.com/entra/msal/java/getting-started/device-code-flow",
        ]
        row.unconfirmed = [
            "authorization_declined as Entra's refusal code (seen in a client's notes, not in the page searched)",
            "the discovery path /{tenant}/v2.0/.well-known/openid-configuration (not in the pages searched)",
        ]
        return row
    }()

    // Google: oauth2.googleapis.com /device/code, /token, /revoke; the response names the URI `verification_url`;
    // the poll carries client_secret in the body; userinfo at openidconnect.googleapis.com/v1/userinfo; OIDC discovery
    // at accounts.google.com.
    // https://developers.google.com/identity/protocols/oauth2/limited-input-device
    // https://developers.google.com/identity/gsi/web/guides/devices
    private static let google: OAuthProviderRules = {
        var row = rfc(
            .google,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/device/code",
                token: "/token",
                revocation: "/revoke",
                userinfo: "/v1/userinfo",
                introspection: nil
            )
        )
        row.discoveryPath = "/.well-known/openid-configuration"
        row.verificationURIField = "verification_url"
        row.sendsVerificationURIComplete = false
        row.supportedClientAuthentication = [.clientSecretPost]
        row.defaultClientAuthentication = .clientSecretPost
        row.documentation = [
            "https://developers.google.com/identity/protocols/oauth2/limited-input-device",
            "https://developers.google.com/identity/gsi/web/guides/devices",
        ]
        row.unconfirmed = [
            "the HTTP status of each polling error (kept at RFC 6749's 400; Google is reported to use 428 and 403)",
            "client_secret_basic on the token endpoint",
        ]
        return row
    }()

    // Okta (default custom authorization server): /oauth2/default/v1/device/authorize, /token, /revoke, /userinfo,
    // /introspect; metadata lists none, client_secret_basic, client_secret_post, client_secret_jwt, private_key_jwt.
    // https://developer.okta.com/docs/guides/device-authorization-grant/main
    // https://developer.okta.com/docs/api/openapi/okta-oauth/oauth/tag/CustomAS/
    // https://developer.okta.com/docs/api/openapi/okta-oauth/oauth/tag/OrgAS
    private static let okta: OAuthProviderRules = {
        var row = rfc(
            .okta,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/oauth2/default/v1/device/authorize",
                token: "/oauth2/default/v1/token",
                revocation: "/oauth2/default/v1/revoke",
                userinfo: "/oauth2/default/v1/userinfo",
                introspection: "/oauth2/default/v1/introspect"
            )
        )
        row.discoveryPath = "/oauth2/default/.well-known/oauth-authorization-server"
        row.documentation = [
            "https://developer.okta.com/docs/guides/device-authorization-grant/main",
            "https://developer.okta.com/docs/api/openapi/okta-oauth/oauth/tag/CustomAS/",
        ]
        row.unconfirmed = ["verification_uri_complete in the device authorization response"]
        return row
    }()

    // Auth0: /oauth/device/code, /oauth/token, /oauth/revoke (refresh tokens), /userinfo; polling errors are 403
    // (authorization_pending, access_denied, expired_token) and 429 (slow_down); "expired_token error is returned
    // exactly once. After that, the endpoint returns the invalid_grant error."
    // https://auth0.com/docs/get-started/authentication-and-authorization-flow/device-authorization-flow/call-your-api-using-the-device-authorization-flow
    // https://auth0.com/docs/quickstart/native/device/interactive
    // https://auth0.com/docs/api/authentication/device-authorization-flow/authorize-device
    private static let auth0: OAuthProviderRules = {
        var row = rfc(
            .auth0,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/oauth/device/code",
                token: "/oauth/token",
                revocation: "/oauth/revoke",
                userinfo: "/userinfo",
                introspection: nil
            )
        )
        row.discoveryPath = "/.well-known/openid-configuration"
        row.tokenErrorStatus = 403
        row.tokenErrorStatusOverrides = [.slowDown: 429, .invalidGrant: 403]
        row.expiredCodeRepeatsAsInvalidGrant = true
        row.revocableTokens = [.refreshToken]
        row.documentation = [
            "https://auth0.com/docs/quickstart/native/device/interactive",
            "https://auth0.com/docs/api/authentication/device-authorization-flow/authorize-device",
        ]
        row.unconfirmed = [
            "the status of invalid_grant after expiry (taken as 403, like expired_token)",
            "/oauth/revoke taking refresh tokens only",
        ]
        return row
    }()

    // GitHub: /login/device/code and /login/oauth/access_token; no discovery, no RFC 7009 revocation; answers
    // form-encoded unless `Accept: application/json`; errors (authorization_pending, slow_down, expired_token,
    // access_denied, …) come in a 200 answer; slow_down "includes the new interval that you must use"; the device
    // flow needs only the client id. Userinfo is the REST API's /user (host api.github.com).
    // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#device-flow
    // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#error-codes-for-the-device-flow
    private static let github: OAuthProviderRules = {
        var row = rfc(
            .github,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/login/device/code",
                token: "/login/oauth/access_token",
                revocation: nil,
                userinfo: "/user",
                introspection: nil
            )
        )
        row.discoveryPath = nil
        row.sendsVerificationURIComplete = false
        row.tokenErrorStatus = 200
        row.slowDownNamesInterval = true
        row.requiresAcceptJSON = true
        row.supportedClientAuthentication = [.none]
        row.revocableTokens = []
        row.documentation = ["https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#device-flow"]
        row.unconfirmed = [
            "the 200 status of error answers with Accept: application/json (reported for form answers; one report says 400 in JSON mode)"
        ]
        return row
    }()

    // django-oauth-toolkit 3.x: its views under the prefix it is mounted at (`/o/` in its tutorial); RFC 8414 metadata
    // at the root lists token, revocation and introspection but no device authorization endpoint, so that one comes
    // from the row. The device authorization view takes the client in the body only (`client_secret_basic` answers
    // 400 "Missing client_id parameter."); no `verification_uri_complete`; no `slow_down` ("TODO: slow_down" in
    // its grant). Measured against DOT 3.4.1 in Tests/oauth-servers (README, "Where the servers differ").
    // https://django-oauth-toolkit.readthedocs.io/en/stable/tutorial/tutorial_06.html
    // https://django-oauth-toolkit.readthedocs.io/en/stable/settings.html (OAUTH_DEVICE_VERIFICATION_URI)
    private static let djangoOAuthToolkit: OAuthProviderRules = {
        var row = rfc(
            .djangoOAuthToolkit,
            endpoints: OAuthEndpointPaths(
                deviceAuthorization: "/o/device-authorization/",
                token: "/o/token/",
                revocation: "/o/revoke_token/",
                userinfo: "/o/userinfo/",
                introspection: "/o/introspect/"
            )
        )
        row.sendsVerificationURIComplete = false
        row.supportedClientAuthentication = [.none, .clientSecretPost]
        row.documentation = [
            "https://django-oauth-toolkit.readthedocs.io/en/stable/tutorial/tutorial_06.html",
            "Tests/oauth-servers/README.md (measured against DOT 3.4.1)",
        ]
        row.unconfirmed = ["the /o/ prefix: it is where a project mounts DOT's URLs (the tutorial's choice)"]
        return row
    }()
}
