import Crypto
import OAuthDeviceGrant
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Client authentication at the OAuth endpoints (RFC 6749 §2.3, RFC 7523 §2.2 and §3), checked against how the
/// client is registered: a client may use only its registered method.
///
/// Pure: the time and the accepted audiences come in, a verdict comes out. A `private_key_jwt` assertion's `jti` is
/// handed back for the caller to record against replay (``OAuthDeviceAuthority/consumeAssertion(clientId:jti:expiresAt:now:)``).
enum OAuthClientAuthenticator {
    /// An authenticated client.
    struct Authenticated: Sendable, Equatable {
        let client: OAuthClientRegistration
        /// The assertion's `jti` and expiry (epoch ms), for `private_key_jwt`.
        let assertion: Assertion?

        struct Assertion: Sendable, Equatable {
            let jti: String
            let expiresAt: Int64
        }
    }

    /// Why a request's client is refused.
    enum Failure: Error, Sendable, Equatable {
        /// No client identified at all (RFC 6749 §5.2 `invalid_request` on a device authorization, else
        /// `invalid_client`).
        case noClient
        /// More than one method in one request (RFC 6749 §2.3: `MUST NOT`): `invalid_request`.
        case severalMethods
        case unknownClient(String)
        /// The client used another method than it is registered with.
        case wrongMethod(client: String, registered: OAuthClientAuthentication, used: OAuthClientAuthentication)
        case wrongSecret(client: String)
        case invalidAssertion(client: String, reason: String)

        /// Whether the refusal is `invalid_request` rather than `invalid_client`.
        var isInvalidRequest: Bool { self == .severalMethods }

        /// For the log; never a secret.
        var reason: String {
            switch self {
            case .noClient: "no client_id"
            case .severalMethods: "more than one client authentication method"
            case .unknownClient(let client): "unknown client \(client)"
            case .wrongMethod(let client, let registered, let used):
                "client \(client) is registered for \(registered.rawValue), used \(used.rawValue)"
            case .wrongSecret(let client): "wrong secret for client \(client)"
            case .invalidAssertion(let client, let reason): "client assertion of \(client): \(reason)"
            }
        }
    }

    /// Authenticates the client of a request with form `fields` and `authorization` header against `clients`;
    /// an assertion's `aud` must name one of `audiences` (the token endpoint URL or the issuer, RFC 7523 §3 item 3).
    static func authenticate(
        fields: [String: String],
        authorization: String?,
        clients: [OAuthClientRegistration],
        audiences: Set<String>,
        now: Int64
    ) -> Result<Authenticated, Failure> {
        let basic = authorization.flatMap { CredentialsHeader.value(of: $0, scheme: "basic") }
        let assertion = fields[OAuthParameter.clientAssertion]
        let postedSecret = fields[OAuthParameter.clientSecret]
        let presented: [OAuthClientAuthentication?] = [
            basic != nil ? .clientSecretBasic : nil,
            assertion != nil || fields[OAuthParameter.clientAssertionType] != nil ? .privateKeyJWT : nil,
            postedSecret != nil ? .clientSecretPost : nil,
        ]
        let used = presented.compactMap { $0 }
        guard used.count <= 1 else { return .failure(.severalMethods) }
        let method = used.first ?? .none
        let formClientId = fields[OAuthParameter.clientID].flatMap { $0.isEmpty ? nil : $0 }

        var basicCredentials: (id: String, secret: String)?
        if let basic {
            guard let decoded = Self.basicCredentials(basic) else { return .failure(.wrongSecret(client: formClientId ?? "")) }
            basicCredentials = decoded
        }
        let claimedId: String?
        switch method {
        case .clientSecretBasic: claimedId = basicCredentials?.id
        case .privateKeyJWT: claimedId = formClientId ?? assertion.flatMap(Self.unverifiedSubject)
        case .none, .clientSecretPost: claimedId = formClientId
        }
        guard let clientId = claimedId, !clientId.isEmpty else { return .failure(.noClient) }
        // A client_id in the body must name the same client as the credentials (RFC 7523 §3 item 2; RFC 6749 §3.2.1).
        if let formClientId, formClientId != clientId { return .failure(.unknownClient(formClientId)) }
        guard let client = clients.first(where: { $0.clientId == clientId }) else { return .failure(.unknownClient(clientId)) }
        guard client.authentication == method else {
            return .failure(.wrongMethod(client: clientId, registered: client.authentication, used: method))
        }
        switch method {
        case .none:
            return .success(Authenticated(client: client, assertion: nil))
        case .clientSecretBasic, .clientSecretPost:
            let secret = method == .clientSecretBasic ? basicCredentials?.secret : postedSecret
            guard let secret, let expected = client.clientSecret, SimulatorState.constantTimeEquals(secret, expected) else {
                return .failure(.wrongSecret(client: clientId))
            }
            return .success(Authenticated(client: client, assertion: nil))
        case .privateKeyJWT:
            guard fields[OAuthParameter.clientAssertionType] == OAuthClientAuthentication.jwtBearerAssertionType else {
                return .failure(.invalidAssertion(client: clientId, reason: "client_assertion_type is not jwt-bearer"))
            }
            guard let assertion, let key = client.publicKey else {
                return .failure(.invalidAssertion(client: clientId, reason: "no client_assertion"))
            }
            switch Self.verifyAssertion(assertion, clientId: clientId, key: key, audiences: audiences, now: now) {
            case .success(let verified): return .success(Authenticated(client: client, assertion: verified))
            case .failure(let reason): return .failure(.invalidAssertion(client: clientId, reason: reason.text))
            }
        }
    }

    struct AssertionRefusal: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }

    /// RFC 7523 §3: signed by the registered key with the algorithm of that key, `iss` and `sub` the client, `aud`
    /// the server, `exp` in the future, `nbf` (when present) in the past, and a `jti`.
    static func verifyAssertion(
        _ jwt: String,
        clientId: String,
        key: OAuthClientPublicKey,
        audiences: Set<String>,
        now: Int64
    ) -> Result<Authenticated.Assertion, AssertionRefusal> {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64.decodeLenient(parts[0]), let header = MetadataValue.object(parsing: headerData),
            let payload = Base64.decodeLenient(parts[1]), let claims = MetadataValue.object(parsing: payload),
            let signature = Base64.decodeLenient(parts[2])
        else { return .failure(AssertionRefusal("not a compact JWS")) }
        // The key decides the algorithm; a header naming another (or `none`) is refused, never followed.
        guard header["alg"]?.stringValue == key.algorithm else {
            return .failure(AssertionRefusal("alg is not \(key.algorithm), the algorithm of the registered key"))
        }
        let input = Data("\(parts[0]).\(parts[1])".utf8)
        let valid: Bool
        switch key {
        case .p256(let der):
            guard let publicKey = try? P256.Signing.PublicKey(derRepresentation: der),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return .failure(AssertionRefusal("not an ES256 signature")) }
            valid = publicKey.isValidSignature(ecdsa, for: input)
        case .rsa(let der):
            guard let publicKey = try? _RSA.Signing.PublicKey(derRepresentation: der) else {
                return .failure(AssertionRefusal("the registered RSA key cannot be read"))
            }
            valid = publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        }
        guard valid else { return .failure(AssertionRefusal("signature does not verify with the registered key")) }
        guard claims["iss"]?.stringValue == clientId, claims["sub"]?.stringValue == clientId else {
            return .failure(AssertionRefusal("iss and sub must both be the client_id"))
        }
        let audience: [String]
        switch claims["aud"] {
        case .string(let single)?: audience = [single]
        case .list(let many)?: audience = many.compactMap(\.stringValue)
        default: audience = []
        }
        guard audience.contains(where: audiences.contains) else {
            return .failure(AssertionRefusal("aud names neither the token endpoint nor the issuer"))
        }
        guard let exp = Self.seconds(claims["exp"]) else { return .failure(AssertionRefusal("no exp")) }
        guard now < exp * 1000 else { return .failure(AssertionRefusal("expired")) }
        if let nbf = Self.seconds(claims["nbf"]), now < nbf * 1000 { return .failure(AssertionRefusal("not valid yet (nbf)")) }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { return .failure(AssertionRefusal("no jti")) }
        return .success(Authenticated.Assertion(jti: jti, expiresAt: exp * 1000))
    }

    /// The `sub` of an assertion, unchecked: which client's key to verify it with when the body names no client.
    private static func unverifiedSubject(_ jwt: String) -> String? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64.decodeLenient(parts[1]) else { return nil }
        return MetadataValue.object(parsing: payload)?["sub"]?.stringValue
    }

    /// RFC 6749 §2.3.1: Base64 of the form-encoded id, a colon, and the form-encoded secret.
    private static func basicCredentials(_ value: Substring) -> (id: String, secret: String)? {
        guard let data = Base64.decodeLenient(value.trimmingBlanks) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return nil }
        return (FormData.decodeComponent(text[..<colon]), FormData.decodeComponent(text[text.index(after: colon)...]))
    }

    private static func seconds(_ value: MetadataValue?) -> Int64? {
        switch value {
        case .integer(let seconds)?: seconds
        case .number(let seconds)?: Int64(seconds)
        default: nil
        }
    }
}
