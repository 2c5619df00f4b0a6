import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import Testing

@Suite("Provider rows")
struct ProviderRowTests {
    @Test("one row per provider, each citing its documentation")
    func table() {
        #expect(OAuthProviderRules.table.map(\.provider) == OAuthProvider.allCases)
        for rules in OAuthProviderRules.table {
            #expect(!rules.documentation.isEmpty, "\(rules.provider) cites no documentation")
            #expect(rules.defaultInterval == .seconds(5))
            #expect(rules.supportedClientAuthentication.contains(rules.defaultClientAuthentication))
        }
        #expect(OAuthProvider(rawValue: "auth0")?.rules.expiredCodeRepeatsAsInvalidGrant == true)
        #expect(OAuthProvider.github.rules.discoveryPath == nil)
        #expect(OAuthProvider.google.rules.verificationURIField == "verification_url")
    }

    @Test("templates take their placeholders")
    func placeholders() throws {
        let values = OAuthPathPlaceholders(tenant: "contoso", realm: "media")
        #expect(try OAuthProvider.entra.rules.path(.token, placeholders: values) == "/contoso/oauth2/v2.0/token")
        #expect(try OAuthProvider.keycloak.rules.discoveryPath(placeholders: values) == "/realms/media/.well-known/openid-configuration")
        #expect(try OAuthProvider.entra.rules.path(.revocation, placeholders: values) == nil)
        #expect(throws: OAuthPathPlaceholders.Missing.self) { try OAuthProvider.keycloak.rules.path(.token, placeholders: OAuthPathPlaceholders()) }
    }

    @Test("GitHub: no discovery, Accept JSON, errors in a 200 answer, slow_down names the interval")
    func github() {
        var harness = Harness(settings: settings(.github, discovery: .off)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization:
                return json(200, deviceAuthorization(interval: 5, extra: ["verification_uri_complete": NSNull()]))
            case .poll:
                switch harness.pollRequests.count {
                case 1: return json(200, ["error": "authorization_pending"])
                case 2: return json(200, ["error": "slow_down", "interval": 15, "error_description": "Too many requests"])
                case 3: return json(200, ["error": "authorization_pending"])
                default: return json(200, ["access_token": "gho_1", "token_type": "bearer", "scope": "repo"])
                }
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        #expect(harness.requests.first?.purpose == .deviceAuthorization)
        #expect(harness.requests.first?.url == "http://127.0.0.1:9000/login/device/code")
        #expect(harness.requests.allSatisfy { $0.header("Accept") == "application/json" })
        #expect(harness.pollRequests.first?.url == "http://127.0.0.1:9000/login/oauth/access_token")
        #expect(harness.pollRequests.allSatisfy { $0.formValue("client_id") == "tv-app" && $0.formValue("client_secret") == nil })
        #expect(harness.events.pollOutcomes == [.authorizationPending, .slowDown, .authorizationPending, .authorized])
        #expect(harness.events.contains(.slowedDown(requested: .seconds(15), inForce: .seconds(15))))
        #expect(harness.pollGaps[1...].allSatisfy { $0 >= .seconds(15) })
        #expect(harness.polls.filter(\.early).isEmpty)
        // No expires_in: no refresh is planned.
        #expect(harness.events.last == .authorized(scope: "repo", expiresIn: nil, refreshable: false))
        #expect(harness.timers[.refresh] == nil)
    }

    @Test("a generic slow_down naming an interval still adds 5 s: only the row lets the answer name it")
    func namedIntervalNeedsTheRow() {
        var harness = Harness(settings: settings(.generic)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            default: return harness.pollRequests.count == 1 ? json(400, ["error": "slow_down", "interval": 30]) : json(200, tokens())
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        #expect(harness.events.contains(.slowedDown(requested: .seconds(10), inForce: .seconds(10))))
    }

    @Test("Google: verification_url, client_secret_post by default")
    func google() throws {
        var harness = Harness(
            settings: settings(.google),
            server: grantingServer(pendingPolls: 1, authorization: deviceAuthorization(verificationField: "verification_url"))
        )
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        let shown = try #require(harness.events.compactMap { if case .codeShown(let code) = $0 { return code } else { return nil } }.first)
        #expect(shown.verificationURI == "http://127.0.0.1:9000/device")
        #expect(harness.requests.first?.url == "http://127.0.0.1:9000/device/code")
        for request in harness.requests {
            #expect(request.formValue("client_id") == "tv-app")
            #expect(request.formValue("client_secret") == "s3cr&t")
            #expect(request.header("Authorization") == nil)
        }
    }

    @Test("Auth0: 403 pending, 429 slow_down, invalid_grant after expiry ends as expired; audience sent")
    func auth0() {
        var configuration = settings(.auth0)
        configuration.audience = "https://api.example.test"
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            default:
                switch harness.pollRequests.count {
                case 1: return json(403, ["error": "authorization_pending"])
                case 2: return json(429, ["error": "slow_down"])
                default: return json(403, ["error": "invalid_grant", "error_description": "Invalid or expired device code."])
                }
            }
        }
        harness.command(.login)
        harness.run()
        #expect(harness.requests.first?.formValue("audience") == "https://api.example.test")
        #expect(harness.events.pollOutcomes == [.authorizationPending, .slowDown, .expired(.invalidGrant)])
        #expect(harness.events.last == .expired)
        // The 429 carried an OAuth error: slow_down, not a throttled retry.
        #expect(harness.pollGaps.last.map { $0 >= .seconds(10) } == true)
    }

    @Test("Entra: the tenant path, the human message, authorization_declined as a refusal")
    func entra() throws {
        var harness = Harness(settings: settings(.entra)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization:
                var answer = deviceAuthorization(extra: ["message": "To sign in, use a web browser to open the page and enter the code."])
                answer["verification_uri_complete"] = nil
                return json(200, answer)
            default:
                return harness.pollRequests.count > 1 ? json(400, ["error": "authorization_declined"]) : json(400, ["error": "authorization_pending"])
            }
        }
        harness.command(.login)
        harness.run()
        #expect(harness.requests.first?.url == "http://127.0.0.1:9000/common/oauth2/v2.0/devicecode")
        let shown = try #require(harness.events.compactMap { if case .codeShown(let code) = $0 { return code } else { return nil } }.first)
        #expect(shown.message == "To sign in, use a web browser to open the page and enter the code.")
        #expect(shown.verificationURIComplete == nil)
        #expect(harness.events.last == .denied(.other("authorization_declined")))
    }

    @Test("a provider without revocation logs out without a request")
    func entraLogout() {
        var harness = Harness(settings: settings(.entra), server: grantingServer(pendingPolls: 0))
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        let sent = harness.requests.count
        harness.command(.logout)
        #expect(harness.requests.count == sent)
        #expect(harness.events.last == .loggedOut)
    }

    @Test("the device authorization response encodes the provider's field name")
    func encodeForRow() throws {
        let response = OAuthDeviceAuthorizationResponse(deviceCode: "d", userCode: "u", verificationURI: "http://127.0.0.1/device", expiresIn: 900)
        let google = try JSONSerialization.jsonObject(with: response.encoded(for: OAuthProvider.google.rules)) as? [String: Any]
        #expect(google?["verification_url"] as? String == "http://127.0.0.1/device")
        #expect(google?["verification_uri"] == nil)
        let generic = try JSONSerialization.jsonObject(with: response.encoded(for: OAuthProvider.generic.rules)) as? [String: Any]
        #expect(generic?["verification_uri"] as? String == "http://127.0.0.1/device")
        #expect(try JSONDecoder().decode(OAuthDeviceAuthorizationResponse.self, from: response.encoded(for: OAuthProvider.google.rules)) == response)
    }

    @Test("token errors: RFC codes and others")
    func tokenErrors() throws {
        #expect(OAuthTokenError(code: "slow_down") == .slowDown)
        #expect(OAuthTokenError(code: "device_flow_disabled") == .other("device_flow_disabled"))
        let decoded = try JSONDecoder().decode(OAuthErrorResponse.self, from: Data(#"{"error":"slow_down","interval":"10"}"#.utf8))
        #expect(decoded.error == .slowDown)
        #expect(decoded.interval == 10)
        let token = try JSONDecoder().decode(
            OAuthTokenResponse.self,
            from: Data(#"{"access_token":"a","token_type":"Bearer","expires_in":"3599"}"#.utf8)
        )
        #expect(token.expiresIn == 3599)
    }
}
