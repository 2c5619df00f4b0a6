import Crypto
import OAuthDeviceGrant
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How pass-sim serves the OAuth 2.0 Device Authorization Grant (RFC 8628): which provider it imitates, the clients
/// it knows, and the lifetimes and bounds of what it issues.
///
/// JSON (`pass-sim --oauth-config FILE`): `{"provider": "github", "clients": [{"client_id": "…",
/// "token_endpoint_auth_method": "private_key_jwt", "public_key_pem": "…"}], "interval": 5, "code_ttl": 900,
/// "access_token_ttl": 3600, "refresh_token_ttl": 2592000, "base_url": "https://…", "tenant": "…", "realm": "…",
/// "poll_tolerance_ms": 0, "max_device_codes": 10000, "max_grants": 10000}`; every member is optional.
package struct OAuthServerSettings: Sendable {
    /// The provider whose answers are imitated; its row of ``OAuthProviderRules`` decides paths and quirks.
    package var provider: OAuthProvider = .generic
    /// The clients the endpoints accept, each with its one authentication method; `nil`: the provider's default
    /// client (``registeredClients``).
    package var clients: [OAuthClientRegistration]?
    /// The `interval` handed out with a new code; `nil`: the provider row's default (RFC 8628 §3.2: 5 s).
    package var interval: Duration?
    /// How long a device code and its user code live (`expires_in`).
    package var codeTTL: Duration = .seconds(900)
    /// Lifetime of access tokens (`expires_in` of the token response).
    package var accessTokenTTL: Duration = .seconds(3600)
    /// Lifetime of refresh tokens; each refresh starts a new one (rotation).
    package var refreshTokenTTL: Duration = .seconds(30 * 24 * 3600)
    /// The scheme and authority (and any path prefix) of every URL the endpoints hand out (issuer, endpoints,
    /// verification URI), without a trailing slash; `nil`: built from the request's `Host` and whether pass-sim serves
    /// HTTPS. Set it when pass-sim sits behind a proxy that changes either.
    package var baseURL: String?
    /// The values of `{tenant}` and `{realm}` in the provider's path templates when a discovery document names them
    /// (a request's own path captures win).
    package var tenant: String = "common"
    package var realm: String = "regcoded"
    /// How much earlier than the interval a poll may come without counting as early. 0 is RFC 8628's reading; a lab
    /// whose clients poll at exactly the interval across a jittery network may want a few milliseconds.
    package var pollTolerance: Duration = .zero
    /// Device codes kept at once (live or recently ended); past it the oldest are forgotten.
    package var maxDeviceCodes: Int = 10_000
    /// Grants (a login's tokens) kept at once; past it the oldest are forgotten, their tokens with them.
    package var maxGrants: Int = 10_000

    package init() {}

    /// The clients in force: the configured ones, else one client `regcoded-tv` with the provider's default
    /// authentication (a public client for most; Google's takes `client_secret_post` with the secret
    /// ``OAuthClientRegistration/defaultSecret``).
    package var registeredClients: [OAuthClientRegistration] {
        if let clients { return clients }
        let method = self.provider.rules.defaultClientAuthentication
        switch method {
        case .none, .privateKeyJWT:
            return [.defaultClient]
        case .clientSecretBasic, .clientSecretPost:
            return [
                OAuthClientRegistration(
                    clientId: OAuthClientRegistration.defaultClient.clientId,
                    authentication: method,
                    clientSecret: OAuthClientRegistration.defaultSecret
                )
            ]
        }
    }
}

/// A client the OAuth endpoints know (the subset of RFC 7591 client metadata the simulator uses).
package struct OAuthClientRegistration: Sendable, Hashable {
    package var clientId: String
    /// How the client authenticates at the token, device authorization, revocation and introspection endpoints;
    /// any other method is refused `invalid_client`.
    package var authentication: OAuthClientAuthentication
    /// The secret of `client_secret_basic` and `client_secret_post`.
    package var clientSecret: String?
    /// The public key `private_key_jwt` assertions are checked with (P-256 for ES256, RSA for RS256).
    package var publicKey: OAuthClientPublicKey?
    /// The scopes the client may ask for; `nil` allows any.
    package var scopes: Set<String>?

    package init(
        clientId: String,
        authentication: OAuthClientAuthentication,
        clientSecret: String? = nil,
        publicKey: OAuthClientPublicKey? = nil,
        scopes: Set<String>? = nil
    ) {
        self.clientId = clientId
        self.authentication = authentication
        self.clientSecret = clientSecret
        self.publicKey = publicKey
        self.scopes = scopes
    }

    /// The client pass-sim knows on its defaults: regcoded's TV app, public (RFC 8628 §5.6 expects device clients to
    /// be public).
    package static let defaultClient = OAuthClientRegistration(clientId: "regcoded-tv", authentication: .none)
    /// The secret of the default client of a provider whose clients need one.
    package static let defaultSecret = "regcoded-tv-secret"

    /// What is missing for the authentication method, or `nil` when the registration is usable.
    package var problem: String? {
        switch self.authentication {
        case .none: nil
        case .clientSecretBasic, .clientSecretPost:
            self.clientSecret?.isEmpty == false ? nil : "client \(self.clientId): \(self.authentication.rawValue) needs client_secret"
        case .privateKeyJWT:
            self.publicKey == nil ? "client \(self.clientId): private_key_jwt needs public_key_pem (P-256 or RSA)" : nil
        }
    }
}

/// A client's public key for `private_key_jwt` (RFC 7523 §3: the signature is checked with the registered key),
/// kept as its DER SubjectPublicKeyInfo: swift-crypto's P-256 key type is not `Sendable`.
package enum OAuthClientPublicKey: Sendable, Hashable {
    /// ES256.
    case p256(der: Data)
    /// RS256.
    case rsa(der: Data)

    /// The key of a PEM public key (SPKI), P-256 tried first.
    package init(pem: String) throws(OAuthSettingsError) {
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) {
            self = .p256(der: key.derRepresentation)
        } else if let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem) {
            self = .rsa(der: key.derRepresentation)
        } else {
            throw OAuthSettingsError("public_key_pem is neither a P-256 nor an RSA public key in PEM")
        }
    }

    /// The JWS `alg` a signature with this key carries.
    var algorithm: String {
        switch self {
        case .p256: "ES256"
        case .rsa: "RS256"
        }
    }
}

/// Why an OAuth configuration cannot be used.
package struct OAuthSettingsError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

extension OAuthServerSettings {
    private struct File: Decodable {
        struct Client: Decodable {
            var client_id: String
            var token_endpoint_auth_method: String?
            var client_secret: String?
            var public_key_pem: String?
            var public_key_file: String?
            var scopes: [String]?
        }

        var provider: String?
        var clients: [Client]?
        var interval: Double?
        var code_ttl: Double?
        var access_token_ttl: Double?
        var refresh_token_ttl: Double?
        var base_url: String?
        var tenant: String?
        var realm: String?
        var poll_tolerance_ms: Int?
        var max_device_codes: Int?
        var max_grants: Int?
    }

    /// The settings of a JSON configuration (see the type's documentation); `public_key_file` is read relative to
    /// `directory`.
    package static func decode(_ data: Data, directory: String = ".") throws(OAuthSettingsError) -> OAuthServerSettings {
        let file: File
        do {
            // Foundation's decoder stays: the file is a `Decodable` model and its errors name the member at fault.
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw OAuthSettingsError("not an OAuth configuration (\(error))")
        }
        var settings = OAuthServerSettings()
        if let name = file.provider { try settings.selectProvider(named: name) }
        if let clients = file.clients {
            settings.clients = try clients.map { (client) throws(OAuthSettingsError) in try Self.registration(client, directory: directory) }
        }
        for (name, seconds) in [("interval", file.interval), ("code_ttl", file.code_ttl)] {
            if let seconds, seconds <= 0 { throw OAuthSettingsError("\(name) must be greater than 0 seconds") }
        }
        if let seconds = file.interval { settings.interval = .milliseconds(Int64(seconds * 1000)) }
        if let seconds = file.code_ttl { settings.codeTTL = .milliseconds(Int64(seconds * 1000)) }
        if let seconds = file.access_token_ttl { settings.accessTokenTTL = .milliseconds(Int64(max(seconds, 1) * 1000)) }
        if let seconds = file.refresh_token_ttl { settings.refreshTokenTTL = .milliseconds(Int64(max(seconds, 1) * 1000)) }
        settings.baseURL = file.base_url.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let tenant = file.tenant { settings.tenant = tenant }
        if let realm = file.realm { settings.realm = realm }
        if let tolerance = file.poll_tolerance_ms { settings.pollTolerance = .milliseconds(max(tolerance, 0)) }
        if let count = file.max_device_codes { settings.maxDeviceCodes = max(count, 1) }
        if let count = file.max_grants { settings.maxGrants = max(count, 1) }
        try settings.validate()
        return settings
    }

    /// Throws when a client cannot authenticate as registered, uses a method the provider does not offer, or shares
    /// its id with another.
    package func validate() throws(OAuthSettingsError) {
        var seen: Set<String> = []
        let supported = self.provider.rules.supportedClientAuthentication
        for client in self.registeredClients {
            if let problem = client.problem { throw OAuthSettingsError(problem) }
            guard supported.contains(client.authentication) else {
                throw OAuthSettingsError(
                    "client \(client.clientId): \(self.provider.rawValue) does not offer \(client.authentication.rawValue) (it offers \(supported.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            guard seen.insert(client.clientId).inserted else { throw OAuthSettingsError("client \(client.clientId) is registered twice") }
        }
    }

    private static func registration(_ client: File.Client, directory: String) throws(OAuthSettingsError) -> OAuthClientRegistration {
        let method: OAuthClientAuthentication
        if let name = client.token_endpoint_auth_method {
            guard let known = OAuthClientAuthentication(rawValue: name) else {
                throw OAuthSettingsError("client \(client.client_id): unknown token_endpoint_auth_method \(name)")
            }
            method = known
        } else {
            // RFC 7591 §2: the default method is client_secret_basic; a client without a secret is public.
            method = client.client_secret == nil ? .none : .clientSecretBasic
        }
        var pem = client.public_key_pem
        if let path = client.public_key_file {
            let resolved = path.hasPrefix("/") ? path : directory + "/" + path
            guard let data = FileManager.default.contents(atPath: resolved) else {
                throw OAuthSettingsError("client \(client.client_id): cannot read public_key_file \(resolved)")
            }
            pem = String(decoding: data, as: UTF8.self)
        }
        let key: OAuthClientPublicKey?
        do {
            key = try pem.map { (text) throws(OAuthSettingsError) in try OAuthClientPublicKey(pem: text) }
        } catch {
            throw OAuthSettingsError("client \(client.client_id): \(error.description)")
        }
        return OAuthClientRegistration(
            clientId: client.client_id,
            authentication: method,
            clientSecret: client.client_secret,
            publicKey: key,
            scopes: client.scopes.map(Set.init)
        )
    }
}

extension OAuthDeviceAuthority.Policy {
    /// The numbers of `configuration.oauth`, the provider row's default interval and expiry quirk, and the code
    /// scripts every code follows.
    init(_ configuration: SimulatorConfiguration) {
        let settings = configuration.oauth
        let rules = settings.provider.rules
        self.init(
            codeTTL: settings.codeTTL.milliseconds,
            interval: (settings.interval ?? rules.defaultInterval).milliseconds,
            accessTokenTTL: settings.accessTokenTTL.milliseconds,
            refreshTokenTTL: settings.refreshTokenTTL.milliseconds,
            pollTolerance: settings.pollTolerance.milliseconds,
            maxDeviceCodes: settings.maxDeviceCodes,
            maxGrants: settings.maxGrants,
            invalidGrantAfterExpiryReported: rules.expiredCodeRepeatsAsInvalidGrant,
            defaultScript: configuration.defaultCodeScript,
            autoApproveAfter: configuration.autoApproveAfter?.milliseconds
        )
    }
}

extension OAuthServerSettings {
    /// The provider names a configuration may give (``OAuthProvider``'s raw values).
    package static var providerNames: [String] { OAuthProvider.allCases.map(\.rawValue) }

    /// Imitates the provider called `name`.
    package mutating func selectProvider(named name: String) throws(OAuthSettingsError) {
        guard let provider = OAuthProvider(rawValue: name) else {
            throw OAuthSettingsError("unknown provider \(name) (one of \(Self.providerNames.joined(separator: ", ")))")
        }
        self.provider = provider
    }

    /// The settings of the JSON file at `path` (see the type's documentation).
    package static func load(path: String) throws(OAuthSettingsError) -> OAuthServerSettings {
        guard let data = FileManager.default.contents(atPath: path) else { throw OAuthSettingsError("cannot read \(path)") }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        return try Self.decode(data, directory: directory)
    }
}
