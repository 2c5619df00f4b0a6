import DeviceRegistry
import OAuthDeviceGrant
import RegcodeSupport
import Yams

/// The keys of a fleet's `oauth:` section: an OAuth device's client and endpoints (RFC 8628, RFC 8414).
extension ConfigurationKeys {
    typealias OAuthKey = ConfigurationKey<OAuthFleetSettings>

    static let oauth: [OAuthKey] = [
        .custom(
            "provider",
            .choice(OAuthProvider.allCases.map(\.rawValue)),
            "Whose authorization server it is: a row of the providers' table (paths, client authentication, quirks; docs/explanation/oauth-device.md). A provider it does not list works as `generic`.",
            default: { $0.device.provider.rawValue },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.device.provider = try reader.choice(node, path, ignoringCase: true)
            }
        ),
        .optionalString(
            "issuer",
            \.device.issuer,
            "Base URL endpoint paths are joined to (`https://login.example.com/realms/tv`).",
            none: "the daemon's backend"
        ),
        .optionalString(
            "discovery",
            \.device.discovery,
            "Where the endpoints come from: `provider` (the provider's RFC 8414 or OpenID document), `off` (the endpoints below and the provider's paths), or the document's URL or path.",
            none: "provider, when it publishes a document"
        ),
        endpoint("device_authorization_endpoint", .deviceAuthorization),
        endpoint("token_endpoint", .token),
        endpoint("revocation_endpoint", .revocation),
        endpoint("userinfo_endpoint", .userinfo),
        endpoint("introspection_endpoint", .introspection),
        .optionalString("tenant", \.device.placeholders.tenant, "Entra's `{tenant}` in its paths (`common`, `organizations`, a tenant id)."),
        .optionalString("realm", \.device.placeholders.realm, "Keycloak's `{realm}` in its paths."),
        .string("client_id", \.device.clientID, "The client id the authorization server knows the devices by."),
        .custom(
            "client_authentication",
            .choice(OAuthClientAuthentication.allCases.map(\.rawValue)),
            "How the client proves who it is at the token endpoint: `none` (a public client), `client_secret_basic`, `client_secret_post`, `private_key_jwt` (RFC 7523).",
            default: { $0.device.clientAuthentication?.rawValue ?? "the provider's" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.device.clientAuthentication = try reader.choice(node, path, ignoringCase: true) as OAuthClientAuthentication
            }
        ),
        .optionalString("client_secret_file", \.clientSecretFile, "File with the client secret (read at start and on reload; never stored)."),
        .optionalString(
            "private_key_file",
            \.privateKeyFile,
            "File with the PEM private key of `private_key_jwt` (read at start and on reload; never stored)."
        ),
        .custom(
            "signing_algorithm",
            .choice(["ES256", "RS256"]),
            "The algorithm of `private_key_file`'s key.",
            default: { $0.device.signingAlgorithm },
            read: { settings, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path).uppercased()
                guard ["ES256", "RS256"].contains(text) else { throw reader.fail(path, "'\(text)' is not ES256 or RS256") }
                settings.device.signingAlgorithm = text
            }
        ),
        .optionalString("key_id", \.device.keyID, "The `kid` of the client assertion's header."),
        .optionalString("scope", \.device.scope, "`scope` of the device authorization request."),
        .optionalString("audience", \.device.audience, "`audience` of the device authorization request (Auth0's API identifier)."),
        .optionalString("resource", \.device.resource, "`resource` of the device authorization request (RFC 8707)."),
        .custom(
            "exercise",
            .choice(["none", OAuthEndpoint.userinfo.rawValue, OAuthEndpoint.introspection.rawValue]),
            "Use the access token while authorized, as an app would: `userinfo` (GET with the bearer token) or `introspection` (RFC 7662).",
            default: { $0.device.exercise?.rawValue ?? "none" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path).lowercased()
                switch text {
                case "none": settings.device.exercise = nil
                case OAuthEndpoint.userinfo.rawValue: settings.device.exercise = .userinfo
                case OAuthEndpoint.introspection.rawValue: settings.device.exercise = .introspection
                default: throw reader.fail(path, "'\(text)' is not none, userinfo or introspection")
                }
            }
        ),
        .duration("exercise_every", \.exerciseEvery, "How often the access token is used (`exercise`)."),
        .duration("refresh_margin", \.refreshMargin, "How long before the access token expires it is refreshed."),
        .choice(
            "misbehave",
            \.device.misbehave,
            "A client that breaks RFC 8628 §3.5 on purpose, to see a server's enforcement: `ignore-slow-down` (keeps its interval after `slow_down`) or `too-fast` (polls at half the interval).",
            ignoringCase: true
        ),
    ]

    /// An endpoint given explicitly: an absolute URL, or a path joined to `issuer`; it wins over discovery.
    private static func endpoint(_ name: String, _ endpoint: OAuthEndpoint) -> OAuthKey {
        .custom(
            name,
            .optionalString,
            "The \(name.replacingOccurrences(of: "_endpoint", with: "").replacingOccurrences(of: "_", with: " ")) endpoint (URL, or a path joined to `issuer`).",
            default: { $0.device.endpoints[endpoint] ?? "discovered, else the provider's path" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.device.endpoints[endpoint] = try reader.optionalString(node, path)
            }
        )
    }
}
