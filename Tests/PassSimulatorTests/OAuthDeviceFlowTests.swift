import Crypto
import Foundation
import Hummingbird
import OAuthDeviceGrant
import Testing
import _CryptoExtras

@testable import PassSimulator

/// The OAuth 2.0 Device Authorization Grant (RFC 8628) as pass-sim serves it, on a manual clock.
@Suite("OAuth device flow")
struct OAuthDeviceFlowTests {
    static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

    // MARK: Discovery

    @Test func discoveryListsAbsoluteEndpointsAtBothWellKnownPaths() async throws {
        try await Harness().run { client in
            for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
                let reply = try await client.send(.get, path)
                #expect(reply.status == .ok, "\(path)")
                let metadata = try reply.json()
                #expect(metadata["issuer"] as? String == "http://localhost")
                #expect(metadata["device_authorization_endpoint"] as? String == "http://localhost/device_authorization")
                #expect(metadata["token_endpoint"] as? String == "http://localhost/token")
                #expect(metadata["revocation_endpoint"] as? String == "http://localhost/revoke")
                #expect(metadata["introspection_endpoint"] as? String == "http://localhost/introspect")
                #expect(metadata["userinfo_endpoint"] as? String == "http://localhost/userinfo")
                #expect(metadata["grant_types_supported"] as? [String] == [Self.deviceCodeGrant, "refresh_token"])
                #expect(
                    Set(metadata["token_endpoint_auth_methods_supported"] as? [String] ?? [])
                        == ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
                )
            }
        }
    }

    /// The base URL setting replaces the request's origin (a proxy in front); a realm captured from the metadata path
    /// fills the provider's templates.
    @Test func discoveryFollowsTheBaseURLAndThePathsPlaceholders() async throws {
        try await Harness { $0.oauth.baseURL = "https://auth.example.test" }.run { client in
            let metadata = try await client.send(.get, "/.well-known/openid-configuration").json()
            #expect(metadata["token_endpoint"] as? String == "https://auth.example.test/token")
        }
        try await Harness { $0.oauth.provider = .keycloak }.run { client in
            let reply = try await client.send(.get, "/realms/lab/.well-known/openid-configuration")
            #expect(reply.status == .ok)
            let metadata = try reply.json()
            #expect(metadata["issuer"] as? String == "http://localhost/realms/lab")
            #expect(metadata["token_endpoint"] as? String == "http://localhost/realms/lab/protocol/openid-connect/token")
            #expect(
                metadata["device_authorization_endpoint"] as? String == "http://localhost/realms/lab/protocol/openid-connect/auth/device"
            )
        }
    }

    // MARK: The whole flow

    @Test func fullFlowWithSlowDownRefreshRotationRevocationAndIntrospection() async throws {
        let harness = Harness()
        try await harness.run { client in
            let authorization = try await client.form(.post, "/device_authorization", fields: "client_id=regcoded-tv&scope=openid%20profile")
            #expect(authorization.status == .ok, "\(authorization.text)")
            let code = try authorization.json()
            let deviceCode = try #require(code["device_code"] as? String)
            let userCode = try #require(code["user_code"] as? String)
            #expect(userCode.wholeMatch(of: /[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}/) != nil)
            #expect(code["verification_uri"] as? String == "http://localhost/device")
            #expect(code["verification_uri_complete"] as? String == "http://localhost/device?user_code=\(userCode)")
            #expect(code["expires_in"] as? Int == 900)
            #expect(code["interval"] as? Int == 5)

            func poll() async throws -> Reply {
                try await client.form(.post, "/token", fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(deviceCode)&client_id=regcoded-tv")
            }
            harness.clock.advance(by: .seconds(5))
            try Self.expectError(try await poll(), .badRequest, "authorization_pending")
            // One second later is early: slow_down, and the interval becomes 10 s.
            harness.clock.advance(by: .seconds(1))
            try Self.expectError(try await poll(), .badRequest, "slow_down")
            // Six seconds is fine at 5 s but early at 10 s: slowed again, to 15 s.
            harness.clock.advance(by: .seconds(6))
            try Self.expectError(try await poll(), .badRequest, "slow_down")
            let listed = try await client.send(.get, "/_sim/oauth/codes").json()
            let codes = try #require(listed["codes"] as? [[String: Any]])
            #expect(codes.first?["interval"] as? Int == 15)
            harness.clock.advance(by: .seconds(15))
            try Self.expectError(try await poll(), .badRequest, "authorization_pending")
            let stats = harness.simulator.stats.oauth
            #expect(stats.earlyPolls == 2 && stats.slowDowns == 2 && stats.polls == 4)

            let approval = try await client.approve(#"{"code": "\#(userCode)", "userId": "alice"}"#)
            #expect(approval.status == .ok, "\(approval.text)")
            #expect(try approval.json()["status"] as? String == "approved")
            harness.clock.advance(by: .seconds(15))
            let granted = try await poll()
            #expect(granted.status == .ok, "\(granted.text)")
            #expect(granted.headers[.cacheControl] == "no-store")
            let tokens = try granted.json()
            let accessToken = try #require(tokens["access_token"] as? String)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            #expect(tokens["token_type"] as? String == "Bearer")
            #expect(tokens["expires_in"] as? Int == 3600)
            #expect(tokens["scope"] as? String == "openid profile")
            // The device code is spent.
            harness.clock.advance(by: .seconds(15))
            try Self.expectError(try await poll(), .badRequest, "invalid_grant")

            let user = try await client.send(.get, "/userinfo", headers: [.authorization: "Bearer \(accessToken)"])
            #expect(user.status == .ok)
            #expect(try user.json()["sub"] as? String == "alice")

            let refreshed = try await client.form(
                .post,
                "/token",
                fields: "grant_type=refresh_token&refresh_token=\(refreshToken)&client_id=regcoded-tv"
            )
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let rotated = try refreshed.json()
            let newAccessToken = try #require(rotated["access_token"] as? String)
            let newRefreshToken = try #require(rotated["refresh_token"] as? String)
            #expect(newRefreshToken != refreshToken && newAccessToken != accessToken)
            // The old refresh token was rotated away.
            let replayed = try await client.form(
                .post,
                "/token",
                fields: "grant_type=refresh_token&refresh_token=\(refreshToken)&client_id=regcoded-tv"
            )
            try Self.expectError(replayed, .badRequest, "invalid_grant")

            let active = try await client.form(.post, "/introspect", fields: "token=\(newAccessToken)&client_id=regcoded-tv").json()
            #expect(active["active"] as? Bool == true)
            #expect(active["sub"] as? String == "alice")
            #expect(active["client_id"] as? String == "regcoded-tv")
            #expect(active["scope"] as? String == "openid profile")

            let revoked = try await client.form(
                .post,
                "/revoke",
                fields: "token=\(newRefreshToken)&token_type_hint=refresh_token&client_id=regcoded-tv"
            )
            #expect(revoked.status == .ok)
            // Revoking an unknown token is answered 200 too (RFC 7009 §2.2).
            let unknown = try await client.form(.post, "/revoke", fields: "token=nothing&client_id=regcoded-tv")
            #expect(unknown.status == .ok)
            for token in [newRefreshToken, newAccessToken] {
                let inactive = try await client.form(.post, "/introspect", fields: "token=\(token)&client_id=regcoded-tv")
                #expect(inactive.status == .ok)
                let body = try inactive.json()
                #expect(body.count == 1 && body["active"] as? Bool == false, "\(inactive.text)")
            }
            let refused = try await client.send(.get, "/userinfo", headers: [.authorization: "Bearer \(newAccessToken)"])
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.wwwAuthenticate]?.contains(#"error="invalid_token""#) == true)
        }
    }

    @Test func denialThroughTheAdminAPIAndThroughTheVerificationPage() async throws {
        let harness = Harness()
        try await harness.run { client in
            let first = try await Self.authorize(client)
            let denied = try await client.jsonPost("/_sim/oauth/deny", #"{"code": "\#(first.userCode)"}"#)
            #expect(denied.status == .ok, "\(denied.text)")
            try Self.expectError(try await Self.poll(client, first.deviceCode), .badRequest, "access_denied")
            // A decided code cannot be decided again.
            let again = try await client.approve(#"{"code": "\#(first.userCode)"}"#)
            #expect(again.status == .conflict)

            let second = try await Self.authorize(client)
            let page = try await client.send(.get, "/device?user_code=\(second.userCode)")
            #expect(page.status == .ok && page.contentType.hasPrefix("text/html"))
            #expect(page.text.contains(second.userCode))
            // Looking at the page changes nothing; typing the code (lower case, no hyphen) shows the decision.
            let typed = second.userCode.replacingOccurrences(of: "-", with: "").lowercased()
            let decision = try await client.form(.post, "/device", fields: "user_code=\(typed)")
            #expect(decision.status == .ok)
            #expect(decision.text.contains("regcoded-tv") && decision.text.contains(#"value="deny""#))
            let done = try await client.form(.post, "/device/decision", fields: "user_code=\(second.userCode)&decision=deny")
            #expect(done.status == .ok && done.text.contains("Access denied"))
            try Self.expectError(try await Self.poll(client, second.deviceCode), .badRequest, "access_denied")

            let third = try await Self.authorize(client)
            let allowed = try await client.form(.post, "/device/decision", fields: "user_code=\(third.userCode)&decision=approve&username=bob")
            #expect(allowed.status == .ok && allowed.text.contains("Device connected"))
            let tokens = try await Self.poll(client, third.deviceCode)
            #expect(tokens.status == .ok, "\(tokens.text)")
            // A used code is refused on the page.
            let reused = try await client.form(.post, "/device", fields: "user_code=\(third.userCode)")
            #expect(reused.status == .badRequest)
        }
    }

    @Test func expiredCodesAnswerExpiredTokenAndCannotBeApproved() async throws {
        let harness = Harness { $0.oauth.codeTTL = .seconds(60) }
        try await harness.run { client in
            let code = try await Self.authorize(client)
            #expect(code.body["expires_in"] as? Int == 60)
            harness.clock.advance(by: .seconds(60))
            try Self.expectError(try await Self.poll(client, code.deviceCode), .badRequest, "expired_token")
            harness.clock.advance(by: .seconds(5))
            // RFC 8628 keeps answering expired_token (Auth0's row differs: see the quirk test).
            try Self.expectError(try await Self.poll(client, code.deviceCode), .badRequest, "expired_token")
            let late = try await client.approve(#"{"code": "\#(code.userCode)"}"#)
            #expect(late.status == .gone)

            // The admin API expires a code at once.
            let other = try await Self.authorize(client)
            let expired = try await client.jsonPost("/_sim/expire", #"{"code": "\#(other.userCode)"}"#)
            #expect(expired.status == .ok)
            try Self.expectError(try await Self.poll(client, other.deviceCode), .badRequest, "expired_token")
        }
    }

    /// `--auto-approve-after` and code scripts, the mechanism Adobe codes use.
    @Test func autoApprovalAndScriptsApplyToUserCodes() async throws {
        let harness = Harness { $0.autoApproveAfter = .seconds(10) }
        try await harness.run { client in
            let approved = try await Self.authorize(client)
            let scripted = try await Self.authorize(client)
            let script = try await client.send(
                .put,
                "/_sim/codes/\(scripted.userCode)/script",
                headers: [.contentType: "application/json"],
                body: #"{"outcome": "deny", "after": 5}"#
            )
            #expect(script.status == .ok, "\(script.text)")
            harness.clock.advance(by: .seconds(5))
            try Self.expectError(try await Self.poll(client, approved.deviceCode), .badRequest, "authorization_pending")
            try Self.expectError(try await Self.poll(client, scripted.deviceCode), .badRequest, "access_denied")
            harness.clock.advance(by: .seconds(5))
            #expect(try await Self.poll(client, approved.deviceCode).status == .ok)
        }
    }

    // MARK: Client authentication

    /// Kept as bytes: swift-crypto's P-256 key type is not `Sendable`.
    static let p256KeyBytes = P256.Signing.PrivateKey().rawRepresentation
    static var p256Key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: p256KeyBytes) }
    static let rsaKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func clients() throws -> [OAuthClientRegistration] {
        [
            OAuthClientRegistration(clientId: "regcoded-tv", authentication: .none),
            OAuthClientRegistration(clientId: "basic", authentication: .clientSecretBasic, clientSecret: "s3cr:t"),
            OAuthClientRegistration(clientId: "post", authentication: .clientSecretPost, clientSecret: "p0st"),
            OAuthClientRegistration(
                clientId: "jwt-ec",
                authentication: .privateKeyJWT,
                publicKey: try OAuthClientPublicKey(pem: p256Key.publicKey.pemRepresentation)
            ),
            OAuthClientRegistration(
                clientId: "jwt-rsa",
                authentication: .privateKeyJWT,
                publicKey: try OAuthClientPublicKey(pem: rsaKey.publicKey.pemRepresentation)
            ),
            OAuthClientRegistration(clientId: "narrow", authentication: .none, scopes: ["tv"]),
        ]
    }

    /// An RFC 7523 client assertion for `clientId`, signed ES256 or RS256.
    static func assertion(
        _ clientId: String,
        rsa: Bool = false,
        audience: String = "http://localhost/token",
        jti: String = UUID().uuidString,
        expiresAt: Int64 = 1_750_000_060,
        key: P256.Signing.PrivateKey = p256Key
    ) throws -> String {
        func part(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = part(Data(#"{"alg":"\#(rsa ? "RS256" : "ES256")","typ":"JWT"}"#.utf8))
        let claims = part(
            Data(#"{"iss":"\#(clientId)","sub":"\#(clientId)","aud":"\#(audience)","jti":"\#(jti)","exp":\#(expiresAt),"iat":1750000000}"#.utf8)
        )
        let input = Data("\(header).\(claims)".utf8)
        let signature =
            rsa
            ? try rsaKey.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
            : try key.signature(for: input).rawRepresentation
        return "\(header).\(claims).\(part(signature))"
    }

    static func assertionFields(_ clientId: String, _ assertion: String) -> String {
        "client_id=\(clientId)&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=\(assertion)"
    }

    @Test func eachClientAuthenticationMethodAsRegistered() async throws {
        let clients = try Self.clients()
        let harness = Harness {
            $0.oauth.clients = clients
            $0.throttleEnabled = false
        }
        try await harness.run { client in
            func authorize(_ fields: String, headers: HTTPFields = [:]) async throws -> Reply {
                try await client.form(.post, "/device_authorization", headers: headers, fields: fields)
            }
            func basic(_ id: String, _ secret: String) -> HTTPFields {
                let encoded = Data("\(id):\(secret.replacingOccurrences(of: ":", with: "%3A"))".utf8).base64EncodedString()
                return [.authorization: "Basic \(encoded)"]
            }
            // none
            #expect(try await authorize("client_id=regcoded-tv").status == .ok)
            try Self.expectError(try await authorize("client_id=nobody"), .unauthorized, "invalid_client")
            try Self.expectError(try await authorize("scope=tv"), .unauthorized, "invalid_client")
            // client_secret_basic (the secret form-encoded inside the Base64, RFC 6749 §2.3.1)
            #expect(try await authorize("scope=tv", headers: basic("basic", "s3cr:t")).status == .ok)
            let wrongSecret = try await authorize("", headers: basic("basic", "nope"))
            try Self.expectError(wrongSecret, .unauthorized, "invalid_client")
            #expect(wrongSecret.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            // A client may only use its registered method.
            try Self.expectError(try await authorize("client_id=basic&client_secret=s3cr%3At"), .unauthorized, "invalid_client")
            // client_secret_post
            #expect(try await authorize("client_id=post&client_secret=p0st").status == .ok)
            try Self.expectError(try await authorize("client_id=post&client_secret=wrong"), .unauthorized, "invalid_client")
            try Self.expectError(try await authorize("client_id=post"), .unauthorized, "invalid_client")
            // Two methods at once is invalid_request (RFC 6749 §2.3).
            try Self.expectError(
                try await authorize("client_id=post&client_secret=p0st", headers: basic("post", "p0st")),
                .badRequest,
                "invalid_request"
            )
            // private_key_jwt, ES256 and RS256, verified with the registered public key
            #expect(try await authorize(Self.assertionFields("jwt-ec", try Self.assertion("jwt-ec"))).status == .ok)
            #expect(try await authorize(Self.assertionFields("jwt-rsa", try Self.assertion("jwt-rsa", rsa: true))).status == .ok)
            let replayed = try Self.assertion("jwt-ec", jti: "once")
            #expect(try await authorize(Self.assertionFields("jwt-ec", replayed)).status == .ok)
            try Self.expectError(try await authorize(Self.assertionFields("jwt-ec", replayed)), .unauthorized, "invalid_client")
            let otherKey = try Self.assertion("jwt-ec", key: P256.Signing.PrivateKey())
            try Self.expectError(try await authorize(Self.assertionFields("jwt-ec", otherKey)), .unauthorized, "invalid_client")
            let wrongAudience = try Self.assertion("jwt-ec", audience: "https://elsewhere.example/token")
            try Self.expectError(try await authorize(Self.assertionFields("jwt-ec", wrongAudience)), .unauthorized, "invalid_client")
            let expired = try Self.assertion("jwt-ec", expiresAt: 1_749_999_999)
            try Self.expectError(try await authorize(Self.assertionFields("jwt-ec", expired)), .unauthorized, "invalid_client")
            // An RS256 header on an EC client's assertion is never followed.
            let wrongAlgorithm = try Self.assertion("jwt-ec", rsa: true)
            try Self.expectError(try await authorize(Self.assertionFields("jwt-ec", wrongAlgorithm)), .unauthorized, "invalid_client")
            // A registered scope list bounds what may be asked.
            try Self.expectError(try await authorize("client_id=narrow&scope=tv%20admin"), .badRequest, "invalid_scope")
            #expect(harness.simulator.stats.oauth.invalidClients == 11)

            // The token endpoint checks the same way, and a code belongs to its client.
            let code = try #require(
                try await authorize(Self.assertionFields("jwt-ec", try Self.assertion("jwt-ec"))).json()["device_code"] as? String
            )
            let stolen = try await client.form(
                .post,
                "/token",
                fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(code)&client_id=regcoded-tv"
            )
            try Self.expectError(stolen, .badRequest, "invalid_grant")
            let own = try await client.form(
                .post,
                "/token",
                fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(code)&" + Self.assertionFields("jwt-ec", try Self.assertion("jwt-ec"))
            )
            try Self.expectError(own, .badRequest, "authorization_pending")
        }
    }

    @Test func malformedTokenRequests() async throws {
        try await Harness().run { client in
            try Self.expectError(try await client.form(.post, "/token", fields: "client_id=regcoded-tv"), .badRequest, "invalid_request")
            try Self.expectError(
                try await client.form(.post, "/token", fields: "grant_type=password&client_id=regcoded-tv"),
                .badRequest,
                "unsupported_grant_type"
            )
            let json = try await client.jsonPost("/token", #"{"grant_type":"refresh_token"}"#)
            try Self.expectError(json, .badRequest, "invalid_request")
            try Self.expectError(
                try await client.form(.post, "/token", fields: "grant_type=\(Self.deviceCodeGrant)&device_code=forged&client_id=regcoded-tv"),
                .badRequest,
                "invalid_grant"
            )
        }
    }

    // MARK: Provider quirks (from the rows of OAuthProviderRules)

    @Test func githubAnswersErrorsIn200AndNamesTheSlowDownInterval() async throws {
        let harness = Harness { $0.oauth.provider = .github }
        try await harness.run { client in
            let json: HTTPFields = [.accept: "application/json"]
            let authorization = try await client.form(.post, "/login/device/code", headers: json, fields: "client_id=regcoded-tv&scope=read%3Auser")
            #expect(authorization.status == .ok && authorization.contentType.hasPrefix("application/json"))
            let body = try authorization.json()
            let deviceCode = try #require(body["device_code"] as? String)
            #expect(body["verification_uri"] as? String == "http://localhost/device")
            #expect(body["verification_uri_complete"] == nil)
            // Without Accept: application/json GitHub answers form-encoded.
            let form = try await client.form(.post, "/login/device/code", fields: "client_id=regcoded-tv")
            #expect(form.contentType.hasPrefix("application/x-www-form-urlencoded"))
            #expect(form.text.contains("device_code=") && form.text.contains("interval=5"))

            func poll() async throws -> Reply {
                try await client.form(
                    .post,
                    "/login/oauth/access_token",
                    headers: json,
                    fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(deviceCode)&client_id=regcoded-tv"
                )
            }
            harness.clock.advance(by: .seconds(5))
            try Self.expectError(try await poll(), .ok, "authorization_pending")
            let slowed = try await poll()
            try Self.expectError(slowed, .ok, "slow_down")
            #expect(try slowed.json()["interval"] as? Int == 10)
            // The other rows' endpoints GitHub has not are not served.
            #expect(try await client.form(.post, "/revoke", fields: "token=x").status == .notFound)
        }
    }

    @Test func googleNamesTheVerificationURL() async throws {
        try await Harness { $0.oauth.provider = .google }.run { client in
            // Google's clients authenticate with client_secret_post; pass-sim's default client does the same.
            let reply = try await client.form(
                .post,
                "/device/code",
                fields: "client_id=regcoded-tv&client_secret=\(OAuthClientRegistration.defaultSecret)&scope=email"
            )
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(body["verification_url"] as? String == "http://localhost/device")
            #expect(body["verification_uri"] == nil)
            #expect(body["verification_uri_complete"] == nil)
            let publicClient = try await client.form(.post, "/device/code", fields: "client_id=regcoded-tv")
            try Self.expectError(publicClient, .unauthorized, "invalid_client")
        }
    }

    @Test func auth0ReportsExpiryOnceThenInvalidGrant() async throws {
        let harness = Harness {
            $0.oauth.provider = .auth0
            $0.oauth.codeTTL = .seconds(30)
        }
        try await harness.run { client in
            let reply = try await client.form(.post, "/oauth/device/code", fields: "client_id=regcoded-tv")
            let deviceCode = try #require(try reply.json()["device_code"] as? String)
            func poll() async throws -> Reply {
                try await client.form(
                    .post,
                    "/oauth/token",
                    fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(deviceCode)&client_id=regcoded-tv"
                )
            }
            harness.clock.advance(by: .seconds(5))
            try Self.expectError(try await poll(), .forbidden, "authorization_pending")
            try Self.expectError(try await poll(), .tooManyRequests, "slow_down")
            harness.clock.advance(by: .seconds(30))
            try Self.expectError(try await poll(), .forbidden, "expired_token")
            harness.clock.advance(by: .seconds(10))
            try Self.expectError(try await poll(), .forbidden, "invalid_grant")
        }
    }

    @Test func entraAddsAMessageUnderItsTenantPath() async throws {
        try await Harness { $0.oauth.provider = .entra }.run { client in
            let reply = try await client.form(.post, "/organizations/oauth2/v2.0/devicecode", fields: "client_id=regcoded-tv&scope=openid")
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            let userCode = try #require(body["user_code"] as? String)
            #expect((body["message"] as? String)?.contains(userCode) == true)
            let metadata = try await client.send(.get, "/consumers/v2.0/.well-known/openid-configuration").json()
            #expect(metadata["token_endpoint"] as? String == "http://localhost/consumers/oauth2/v2.0/token")
        }
    }

    // MARK: Faults, throttle, bounds

    @Test func faultsAndTheThrottleApplyByEndpointClass() async throws {
        let harness = Harness {
            $0.faults = FaultConfiguration(classes: [.poll: FaultRates(error5xx: 1, error5xxStatuses: [503]), .other: FaultRates(tokenExpiry: 1)])
        }
        try await harness.run { client in
            let code = try await Self.authorize(client)
            let polled = try await Self.poll(client, code.deviceCode)
            #expect(polled.status.code == 503)
            let user = try await client.send(.get, "/userinfo", headers: [.authorization: "Bearer anything"])
            #expect(user.status == .unauthorized)
            #expect(try user.json()["error"] as? String == "invalid_token")
            #expect(harness.simulator.stats.requests[.poll]?["503"] == 1)
            #expect(harness.simulator.stats.requests[.sessions]?["200"] == 1)
        }
        let throttled = Harness { $0.throttleBurst = 1 }  // a new client gets burst + 1 at once
        try await throttled.run { client in
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(Int(try await client.send(.get, "/.well-known/openid-configuration").status.code)) }
            #expect(statuses == [200, 200, 429])
        }
    }

    /// Codes, grants and assertion ids are forgotten after expiry, and never exceed their caps.
    @Test func stateStaysBounded() {
        var authority = OAuthDeviceAuthority(
            policy: .init(
                codeTTL: 60_000,
                interval: 5_000,
                accessTokenTTL: 60_000,
                refreshTokenTTL: 120_000,
                pollTolerance: 0,
                maxDeviceCodes: 16,
                maxGrants: 8,
                invalidGrantAfterExpiryReported: false,
                defaultScript: CodeScript(outcome: .approve),
                autoApproveAfter: nil
            ),
            now: 0
        )
        for index in 0..<100 {
            let code = authority.authorize(clientId: "tv", scope: nil, now: Int64(index))
            let outcome = authority.poll(deviceCode: code.deviceCode, clientId: "tv", now: Int64(index))
            guard case .issued = outcome else {
                Issue.record("not issued: \(outcome)")
                continue
            }
            _ = authority.consumeAssertion(clientId: "tv", jti: "\(index)", expiresAt: 60_000, now: Int64(index))
        }
        #expect(authority.counts.codes <= 16)
        #expect(authority.counts.grants <= 8)
        #expect(authority.counts.accessTokens <= 8 * OAuthDeviceAuthority.maxAccessTokensPerGrant)
        #expect(authority.stats.evicted > 0)
        authority.sweep(now: 1_000_000)
        #expect(authority.counts == (0, 0, 0, 0))
    }

    // MARK: Support

    struct IssuedCode {
        let deviceCode: String
        let userCode: String
        let body: [String: Any]
    }

    static func authorize(_ client: Client, clientId: String = "regcoded-tv") async throws -> IssuedCode {
        let reply = try await client.form(.post, "/device_authorization", fields: "client_id=\(clientId)")
        #expect(reply.status == .ok, "\(reply.text)")
        let body = try reply.json()
        return IssuedCode(
            deviceCode: try #require(body["device_code"] as? String),
            userCode: try #require(body["user_code"] as? String),
            body: body
        )
    }

    static func poll(_ client: Client, _ deviceCode: String, clientId: String = "regcoded-tv") async throws -> Reply {
        try await client.form(.post, "/token", fields: "grant_type=\(Self.deviceCodeGrant)&device_code=\(deviceCode)&client_id=\(clientId)")
    }

    static func expectError(
        _ reply: Reply,
        _ status: HTTPResponse.Status,
        _ error: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(reply.status == status, "body: \(reply.text)", sourceLocation: sourceLocation)
        #expect(try reply.json()["error"] as? String == error, "body: \(reply.text)", sourceLocation: sourceLocation)
    }
}
