import Crypto
import Foundation
import _CryptoExtras

/// The private key of a `private_key_jwt` client (RFC 7523 §2.2), parsed once when the settings are made.
package struct OAuthSigningKey: Sendable {
    package enum Algorithm: String, Sendable, Hashable, Codable {
        /// ECDSA P-256 with SHA-256 (RFC 7518 §3.4).
        case es256 = "ES256"
        /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
        case rs256 = "RS256"
    }

    private enum Key: Sendable {
        /// The raw scalar: swift-crypto's P-256 key is not `Sendable` on every platform.
        case es256(Data)
        case rs256(_RSA.Signing.PrivateKey)
    }

    private let key: Key
    /// The JWS `kid`, when the server holds several keys of the client.
    package let keyID: String?

    package var algorithm: Algorithm {
        switch key {
        case .es256: .es256
        case .rs256: .rs256
        }
    }

    /// A PEM private key (PKCS #8, SEC 1 or PKCS #1) for `algorithm`.
    package init(pem: String, algorithm: Algorithm, keyID: String? = nil) throws {
        switch algorithm {
        case .es256: key = .es256(try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation)
        case .rs256: key = .rs256(try _RSA.Signing.PrivateKey(pemRepresentation: pem))
        }
        self.keyID = keyID
    }

    package init(_ key: P256.Signing.PrivateKey, keyID: String? = nil) {
        self.key = .es256(key.rawRepresentation)
        self.keyID = keyID
    }

    package init(_ key: _RSA.Signing.PrivateKey, keyID: String? = nil) {
        self.key = .rs256(key)
        self.keyID = keyID
    }

    /// The JWS signature of `input`: ES256's is r ‖ s (64 bytes, RFC 7518 §3.4), not DER.
    func sign(_ input: Data) throws -> Data {
        switch key {
        case .es256(let raw): try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: input).rawRepresentation
        case .rs256(let key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }
}

/// A `client_assertion` (RFC 7523 §3): `iss` = `sub` = the client id, `aud` = the token endpoint, a fresh `jti`,
/// `iat` and `exp` from the device's clock.
enum ClientAssertion {
    struct Claims: Codable, Equatable {
        var iss: String
        var sub: String
        var aud: String
        var jti: String
        var iat: Int64
        var exp: Int64
    }

    private struct Header: Codable {
        var alg: String
        var typ = "JWT"
        var kid: String?
    }

    static func make(claims: Claims, key: OAuthSigningKey) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(alg: key.algorithm.rawValue, kid: key.keyID))
        let payload = try encoder.encode(claims)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.sign(Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}

/// Base64url without padding (RFC 7515 §2).
package enum Base64URL {
    package static func encode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
