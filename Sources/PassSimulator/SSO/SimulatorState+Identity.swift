import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The simulator's identity services (platform identity, service token) and the check of SSO headers (sso.md §2.2,
/// §2.3, §3.3).
extension SimulatorState {
    /// `iss` of the platform identity tokens the simulator issues.
    package static let platformIssuer = "pass-sim-platform"
    /// Default `iss` of the service tokens the simulator issues.
    package static let serviceIssuer = "pass-sim-service"

    /// A generated secret, created on first use and kept in the state.
    func secret(_ name: SSOSecret) throws -> String {
        if let existing = self.ssoSecrets[name] { return existing }
        let value: String
        switch name {
        case .platformHMAC, .ssoServiceHMAC:
            value = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        case .serviceRSA:
            value = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        }
        self.ssoSecrets[name] = value
        return value
    }

    func symmetricKey(_ name: SSOSecret) throws -> SymmetricKey {
        SymmetricKey(data: Data(base64Encoded: try self.secret(name)) ?? Data())
    }

    /// Issues a platform identity token (HS256, `iss` `pass-sim-platform`, `aud` `adobe`) for platform user `sub` on
    /// device `did`, valid `ttlSeconds`.
    package func issuePlatformToken(subject: String, deviceId: String?, ttlSeconds: Int64) throws -> String {
        let now = self.now / 1000
        var claims: [String: MetadataValue] = [
            "iss": .string(Self.platformIssuer), "sub": .string(subject), "aud": .string("adobe"),
            "iat": .integer(now), "exp": .integer(now + ttlSeconds),
        ]
        if let deviceId { claims["did"] = .string(deviceId) }
        return try JWS.sign(claims: claims, key: .hmac(try self.symmetricKey(.platformHMAC)))
    }

    /// Issues a service token (RS256 with the simulator's key, `aud` `adobe`) for user `sub` of identity service `iss`,
    /// valid `ttlSeconds`.
    package func issueServiceToken(issuer: String, subject: String, ttlSeconds: Int64) throws -> String {
        let now = self.now / 1000
        let claims: [String: MetadataValue] = [
            "iss": .string(issuer), "sub": .string(subject), "aud": .string("adobe"),
            "iat": .integer(now), "exp": .integer(now + ttlSeconds), "jti": .string(UUID().uuidString.lowercased()),
        ]
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: try self.secret(.serviceRSA))
        return try JWS.sign(claims: claims, key: .rsa(key))
    }

    /// The public key of the simulator's service tokens in PEM (generated on first use).
    package func serviceTokenPublicKey() throws -> String {
        try _RSA.Signing.PrivateKey(pemRepresentation: try self.secret(.serviceRSA)).publicKey.pemRepresentation
    }

    /// The subject of an SSO header, or `nil` when the token is not one to take into account: unknown issuer, bad
    /// signature, wrong algorithm, `aud` not "adobe" (any case), missing or past `exp`, future `nbf`, no `sub`.
    ///
    /// Tokens of a configured issuer (``SimulatorConfiguration/identityIssuers``) are checked with its key and must
    /// arrive in its header; otherwise platform tokens must be the simulator's own (`pass-sim-platform`, HS256) and
    /// service tokens signed with the simulator's RSA key, whatever their `iss`, or be the SSO Service's
    /// (`ssoservicetoken`, whose payload has no `aud`: Adobe's step 2 sample).
    func verifySSOToken(_ token: String, method: SSOMethod) -> SSOSubject? {
        guard let issuer = JWS.unverifiedIssuer(token) else { return nil }
        if method == .serviceToken, issuer == Self.ssoServiceIssuer, self.configuration.identityIssuers[issuer] == nil {
            guard case .valid(let commonId) = self.checkSSOServiceToken(token) else { return nil }
            return SSOSubject(method: .serviceToken, issuer: issuer, subject: commonId)
        }
        let key: JWS.VerificationKey
        if let configured = self.configuration.identityIssuers[issuer] {
            guard configured.kind == method, configured.problem == nil else { return nil }
            switch configured.alg {
            case .hs256: key = .hmac(SymmetricKey(data: Data(configured.key.utf8)))
            case .rs256:
                guard let publicKey = try? JWS.rsaPublicKey(pem: configured.key) else { return nil }
                key = .rsa(publicKey)
            }
        } else {
            switch method {
            case .platform:
                guard issuer == Self.platformIssuer, let secret = self.ssoSecrets[.platformHMAC],
                    let data = Data(base64Encoded: secret)
                else { return nil }
                key = .hmac(SymmetricKey(data: data))
            case .serviceToken:
                guard let pem = self.ssoSecrets[.serviceRSA], let privateKey = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else {
                    return nil
                }
                key = .rsa(privateKey.publicKey)
            }
        }
        guard let claims = JWS.verify(token, key: key) else { return nil }
        let nowSeconds = self.now / 1000
        let audiences: [String] =
            switch claims["aud"] {
            case .string(let single)?: [single]
            case .list(let values)?: values.compactMap(\.stringValue)
            default: []
            }
        guard audiences.contains(where: { $0.lowercased() == "adobe" }),
            let expiry = claims.seconds("exp"), nowSeconds < expiry,
            (claims.seconds("nbf") ?? 0) <= nowSeconds,
            let subject = claims.string("sub"), !subject.isEmpty
        else { return nil }
        return SSOSubject(method: method, issuer: issuer, subject: subject)
    }
}
