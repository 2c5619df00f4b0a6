import Crypto
import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import Testing
import _CryptoExtras

@Suite("Client authentication")
struct ClientAuthenticationTests {
    /// The first request of a login (the device authorization request).
    private func firstRequest(_ configuration: OAuthDeviceSettings) throws -> OAuthRequest {
        var harness = Harness(settings: configuration, server: grantingServer(pendingPolls: 0))
        harness.command(.login)
        return try #require(harness.requests.first)
    }

    @Test("none: client_id in the body")
    func none() throws {
        let request = try firstRequest(settings(.generic, authentication: OAuthClientAuthentication.none))
        #expect(request.formValue("client_id") == "tv-app")
        #expect(request.formValue("client_secret") == nil)
        #expect(request.header("Authorization") == nil)
    }

    @Test("client_secret_basic: form-encoded id and secret in the Basic header, nothing in the body")
    func basic() throws {
        let request = try firstRequest(settings(.generic, authentication: .clientSecretBasic))
        let header = try #require(request.header("Authorization"))
        #expect(header.hasPrefix("Basic "))
        let decoded = try #require(Data(base64Encoded: String(header.dropFirst(6))))
        // RFC 6749 §2.3.1: "&" of the secret is encoded before joining.
        #expect(String(decoding: decoded, as: UTF8.self) == "tv-app:s3cr%26t")
        #expect(request.formValue("client_id") == nil)
        #expect(request.formValue("client_secret") == nil)
    }

    @Test("client_secret_post: id and secret in the body")
    func post() throws {
        let request = try firstRequest(settings(.generic, authentication: .clientSecretPost))
        #expect(request.formValue("client_id") == "tv-app")
        #expect(request.formValue("client_secret") == "s3cr&t")
        #expect(request.header("Authorization") == nil)
        #expect(String(decoding: request.body, as: UTF8.self).contains("client_secret=s3cr%26t"))
    }

    /// Splits a compact JWS and decodes its header and claims.
    private func parts(_ jwt: String) throws -> (header: [String: Any], claims: [String: Any], input: Data, signature: Data) {
        let pieces = jwt.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        let header = try #require(Base64URL.decode(pieces[0]).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        let claims = try #require(Base64URL.decode(pieces[1]).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        let signature = try #require(Base64URL.decode(pieces[2]))
        return (header, claims, Data((pieces[0] + "." + pieces[1]).utf8), signature)
    }

    private func checkClaims(_ claims: [String: Any]) {
        #expect(claims["iss"] as? String == "tv-app")
        #expect(claims["sub"] as? String == "tv-app")
        // RFC 7523 §3: the token endpoint, even on the device authorization request.
        #expect(claims["aud"] as? String == "http://127.0.0.1:9000/token")
        #expect((claims["jti"] as? String)?.isEmpty == false)
        let iat = claims["iat"] as? Int
        #expect(iat == 1_750_000_000)
        #expect(claims["exp"] as? Int == iat.map { $0 + 60 })
    }

    @Test("private_key_jwt (ES256): an assertion swift-crypto verifies, with RFC 7523's claims")
    func privateKeyES256() throws {
        let key = P256.Signing.PrivateKey()
        var configuration = settings(.generic, authentication: .privateKeyJWT)
        configuration.client.signingKey = try OAuthSigningKey(pem: key.pemRepresentation, algorithm: .es256, keyID: "k1")
        let request = try firstRequest(configuration)
        #expect(request.formValue("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(request.formValue("client_secret") == nil)
        let jwt = try parts(try #require(request.formValue("client_assertion")))
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.header["kid"] as? String == "k1")
        checkClaims(jwt.claims)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        #expect(key.publicKey.isValidSignature(signature, for: jwt.input))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: jwt.input))
    }

    @Test("private_key_jwt (RS256): PKCS #1 v1.5 over SHA-256; each assertion has its own jti")
    func privateKeyRS256() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        var configuration = settings(.generic, authentication: .privateKeyJWT)
        configuration.client.signingKey = OAuthSigningKey(key)
        var harness = Harness(settings: configuration, server: grantingServer(pendingPolls: 1))
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        let assertions = harness.requests.compactMap { $0.formValue("client_assertion") }
        #expect(assertions.count == 3)
        var identifiers = Set<String>()
        for assertion in assertions {
            let jwt = try parts(assertion)
            #expect(jwt.header["alg"] as? String == "RS256")
            let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
            #expect(key.publicKey.isValidSignature(signature, for: jwt.input, padding: .insecurePKCS1v1_5))
            identifiers.insert(try #require(jwt.claims["jti"] as? String))
        }
        #expect(identifiers.count == 3)
    }

    @Test("private_key_jwt without a key, or a method the row lacks, fails before any request")
    func invalidConfiguration() {
        var harness = Harness(settings: settings(.generic, authentication: .privateKeyJWT), server: grantingServer(pendingPolls: 0))
        harness.command(.login)
        #expect(harness.requests.isEmpty)
        var github = Harness(settings: settings(.github, authentication: .clientSecretBasic), server: grantingServer(pendingPolls: 0))
        github.command(.login)
        #expect(github.requests.isEmpty)
        guard case .failed(let failure) = github.machine.state else {
            Issue.record("expected failed, got \(github.machine.state)")
            return
        }
        #expect(failure.stage == .configuration)
    }
}
