import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import Testing

@Suite("Discovery")
struct DiscoveryTests {
    /// RFC 8414 §3.2's example, with the device authorization endpoint of RFC 8628 §4.
    static let rfc8414 = #"""
        {
          "issuer": "https://server.example.com",
          "authorization_endpoint": "https://server.example.com/authorize",
          "token_endpoint": "https://server.example.com/token",
          "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
          "token_endpoint_auth_signing_alg_values_supported": ["RS256", "ES256"],
          "userinfo_endpoint": "https://server.example.com/userinfo",
          "jwks_uri": "https://server.example.com/jwks.json",
          "registration_endpoint": "https://server.example.com/register",
          "scopes_supported": ["openid", "profile", "email", "address", "phone", "offline_access"],
          "response_types_supported": ["code", "code token"],
          "service_documentation": "http://server.example.com/service_documentation.html",
          "ui_locales_supported": ["en-US", "en-GB", "en-CA", "fr-FR", "fr-CA"],
          "device_authorization_endpoint": "https://server.example.com/device_authorization"
        }
        """#

    /// Keycloak's OIDC document, abridged.
    static let keycloak = #"""
        {
          "issuer": "http://127.0.0.1:9000/realms/media",
          "authorization_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/auth",
          "token_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/token",
          "introspection_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/token/introspect",
          "userinfo_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/userinfo",
          "end_session_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/logout",
          "jwks_uri": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/certs",
          "grant_types_supported": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
          "token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic", "client_secret_post", "tls_client_auth", "client_secret_jwt"],
          "revocation_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/revoke",
          "device_authorization_endpoint": "http://127.0.0.1:9000/realms/media/protocol/openid-connect/auth/device",
          "claims_parameter_supported": true
        }
        """#

    @Test("an RFC 8414 document decodes; unknown members and methods do not fail it")
    func rfc8414Document() throws {
        let metadata = try JSONDecoder().decode(OAuthServerMetadata.self, from: Data(Self.rfc8414.utf8))
        #expect(metadata.issuer == "https://server.example.com")
        #expect(metadata.deviceAuthorizationEndpoint == "https://server.example.com/device_authorization")
        #expect(metadata.tokenEndpoint == "https://server.example.com/token")
        #expect(metadata.revocationEndpoint == nil)
        #expect(metadata.tokenEndpointAuthMethodsSupported == [.known(.clientSecretBasic), .known(.privateKeyJWT)])
    }

    @Test("Keycloak: the realm's OIDC document gives the endpoints the device uses")
    func keycloakDocument() throws {
        var configuration = settings(.keycloak, discovery: .provider)
        configuration.exercise = OAuthTokenExercise(endpoint: .introspection, every: .seconds(60))
        configuration.client.authentication = .clientSecretBasic
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .discovery: return .success(OAuthHTTPResponse(status: 200, body: Data(Self.keycloak.utf8)))
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens())
            case .exercise: return json(200, ["active": true])
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.events.contains { if case .tokenExercised = $0 { true } else { false } } }
        #expect(harness.requests[0].url == "http://127.0.0.1:9000/realms/media/.well-known/openid-configuration")
        #expect(harness.requests[1].url == "http://127.0.0.1:9000/realms/media/protocol/openid-connect/auth/device")
        #expect(harness.pollRequests.first?.url == "http://127.0.0.1:9000/realms/media/protocol/openid-connect/token")
        let introspection = try #require(harness.requests.last)
        #expect(introspection.url == "http://127.0.0.1:9000/realms/media/protocol/openid-connect/token/introspect")
        #expect(introspection.formValue("token") == "A1")
        #expect(introspection.header("Authorization")?.hasPrefix("Basic ") == true)
        #expect(harness.events.last == .tokenExercised(.introspection, status: 200, active: true))
        #expect(harness.events.first == .discovered(issuer: "http://127.0.0.1:9000/realms/media"))
    }

    @Test("explicit endpoints win over the document; a document without them falls back to the row")
    func precedence() {
        var configuration = settings(.generic, discovery: .url("/meta"))
        configuration.endpoints[.deviceAuthorization] = "http://127.0.0.1:9001/custom/device"
        var harness = Harness(settings: configuration) { request, _ in
            switch request.purpose {
            case .discovery: return json(200, ["issuer": "http://127.0.0.1:9000", "device_authorization_endpoint": "http://127.0.0.1:9000/ignored"])
            default: return json(200, deviceAuthorization())
            }
        }
        harness.command(.login)
        harness.run { $0.requests.count == 3 }
        #expect(harness.requests.map(\.url) == ["http://127.0.0.1:9000/meta", "http://127.0.0.1:9001/custom/device", "http://127.0.0.1:9000/token"])
    }

    @Test("a document that is not metadata fails the login")
    func malformed() {
        var harness = Harness(settings: settings(.generic, discovery: .provider)) { _, _ in
            .success(OAuthHTTPResponse(status: 200, body: Data("<html>".utf8)))
        }
        harness.command(.login)
        harness.run()
        #expect(harness.requests.count == 1)
        #expect(harness.events.last == .failed(OAuthFailure(stage: .discovery, reason: .malformed("not an authorization server metadata document"))))
    }
}
