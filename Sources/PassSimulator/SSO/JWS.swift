import Crypto
import RegcodeSupport
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Compact JWS (RFC 7515) for the SSO identity tokens: HS256 and RS256 only, never `none`.
///
/// The algorithm is fixed by the key that verifies, not by the token's header (which must agree), so a token cannot
/// choose a weaker check.
enum JWS {
    /// A verified token's claims.
    struct Claims: Sendable {
        let fields: [String: MetadataValue]

        subscript(_ name: String) -> MetadataValue? { self.fields[name] }

        func string(_ name: String) -> String? { self.fields[name]?.stringValue }

        /// A NumericDate claim (seconds), as an integer or a number.
        func seconds(_ name: String) -> Int64? {
            switch self.fields[name] {
            case .integer(let value)?: value
            case .number(let value)?: Int64(value)
            default: nil
            }
        }
    }

    /// The key a token is checked with.
    enum VerificationKey {
        case hmac(SymmetricKey)
        case rsa(_RSA.Signing.PublicKey)

        var algorithm: IdentityIssuer.Algorithm {
            switch self {
            case .hmac: .hs256
            case .rsa: .rs256
            }
        }
    }

    /// The key a token is signed with.
    enum SigningKey {
        case hmac(SymmetricKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    static func rsaPublicKey(pem: String) throws -> _RSA.Signing.PublicKey {
        try _RSA.Signing.PublicKey(pemRepresentation: pem)
    }

    /// `header.payload.signature` for `claims`.
    static func sign(claims: [String: MetadataValue], key: SigningKey) throws -> String {
        let alg: String
        switch key {
        case .hmac: alg = "HS256"
        case .rsa: alg = "RS256"
        }
        let header = Base64.urlSafeEncode(Data(JSONWriter.text(["alg": .string(alg), "typ": "JWT"]).utf8))
        let payload = Base64.urlSafeEncode(Data(JSONWriter.text(.object(claims.mapValues(\.jsonValue))).utf8))
        let input = Data("\(header).\(payload)".utf8)
        let signature: Data
        switch key {
        case .hmac(let secret):
            signature = Data(HMAC<SHA256>.authenticationCode(for: input, using: secret))
        case .rsa(let privateKey):
            signature = try privateKey.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
        return "\(header).\(payload).\(Base64.urlSafeEncode(signature))"
    }

    /// The token's `iss` without checking anything, to pick the verification key; `nil` when not a compact JWS.
    static func unverifiedIssuer(_ token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64.decodeLenient(parts[1]),
            let claims = MetadataValue.object(parsing: payload)
        else { return nil }
        return claims["iss"]?.stringValue
    }

    /// The claims of `token` when its header names `key`'s algorithm and the signature verifies; else `nil`.
    static func verify(_ token: String, key: VerificationKey) -> Claims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64.decodeLenient(parts[0]),
            let header = MetadataValue.object(parsing: headerData),
            header["alg"]?.stringValue == key.algorithm.rawValue,
            let payload = Base64.decodeLenient(parts[1]),
            let signature = Base64.decodeLenient(parts[2])
        else { return nil }
        let input = Data("\(parts[0]).\(parts[1])".utf8)
        switch key {
        case .hmac(let secret):
            guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: secret) else { return nil }
        case .rsa(let publicKey):
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            guard publicKey.isValidSignature(rsaSignature, for: input, padding: .insecurePKCS1v1_5) else { return nil }
        }
        guard let claims = MetadataValue.object(parsing: payload) else { return nil }
        return Claims(fields: claims)
    }
}
