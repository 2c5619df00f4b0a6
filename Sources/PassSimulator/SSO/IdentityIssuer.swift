/// An external identity service whose SSO tokens the simulator accepts (config `identityIssuers`, sso.md §3.3).
package struct IdentityIssuer: Sendable, Hashable, Codable {
    /// The JWS algorithms an issuer may sign with.
    package enum Algorithm: String, Sendable, Hashable, Codable {
        /// HMAC-SHA256 with a shared secret (platform identity only).
        case hs256 = "HS256"
        /// RSASSA-PKCS1-v1_5 with SHA-256 (`SHA256withRSA`).
        case rs256 = "RS256"
    }

    /// Which header the issuer's tokens arrive in.
    package var kind: SSOMethod
    /// How its tokens are signed. Service tokens must be RS256 (Adobe: "Must be signed using SHA256withRSA").
    package var alg: Algorithm
    /// HS256: the shared secret (UTF-8 text); RS256: the public key in PEM.
    package var key: String

    /// An issuer of `kind` tokens signed with `alg` and `key`.
    package init(kind: SSOMethod, alg: Algorithm, key: String) {
        self.kind = kind
        self.alg = alg
        self.key = key
    }

    /// Why an issuer cannot be used, or `nil`.
    package var problem: String? {
        if self.kind == .serviceToken && self.alg != .rs256 { return "service tokens must be RS256" }
        if self.key.isEmpty { return "the key is empty" }
        if self.alg == .rs256 && (try? JWS.rsaPublicKey(pem: self.key)) == nil { return "the key is not an RSA public key in PEM" }
        return nil
    }
}
