import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("SSO: REST v2 platform identity and service token")
struct SSOIdentityTests {
    @Test func v2_platformIdentity_secondApp_platformSSO() async throws {
        try await Harness().run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            let token = try await client.platformToken(sub: "roku-user-1")
            try await client.basicLogin(appA, headers: Client.platformHeader(token))
            let own = try #require(try await client.profiles(appA, headers: Client.platformHeader(token))["Cablevision"])
            #expect(own["type"] as? String == "regular")

            // App B has no profile of its own, but the header reaches app A's login.
            #expect(try await client.profiles(appB).isEmpty)
            let sso = try #require(try await client.profiles(appB, headers: Client.platformHeader(token))["Cablevision"])
            #expect(sso["type"] as? String == "platformSSO")
            #expect(sso["issuer"] as? String == "Cablevision")
            #expect(sso["notBefore"] as? Int64 == own["notBefore"] as? Int64)
            #expect(sso["notAfter"] as? Int64 == own["notAfter"] as? Int64)
            let attributes = try #require(sso["attributes"] as? [String: [String: Any]])
            #expect(attributes["upstreamUserID"]?["value"] as? String == "alice")
            #expect(attributes["mvpd"]?["value"] as? String == "Cablevision")
            // The Roku header works the same.
            let roku = try await client.profiles(appB, headers: [Client.name("X-Roku-Reserved-Roku-Connect-Token"): token])
            #expect(roku["Cablevision"]?["type"] as? String == "platformSSO")
            // Decisions accept the SSO profile.
            #expect(try await client.authorizeDecision(appB, mvpd: "Cablevision", headers: Client.platformHeader(token)).status == .ok)
            try expectEnhancedError(
                try await client.authorizeDecision(appB, mvpd: "Cablevision"),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
            // The integration can switch platform SSO off.
            let put = try await client.send(
                .put,
                "/_sim/integrations/REF30/Cablevision",
                headers: [.contentType: "application/json"],
                body: #"{"sso":{"platform":false}}"#
            )
            #expect(put.status == .ok)
            #expect(try await client.profiles(appB, headers: Client.platformHeader(token)).isEmpty)
        }
    }

    @Test func v2_sessions_authenticatedSSO_noRegcode() async throws {
        try await Harness().run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            let token = try await client.platformToken(sub: "roku-user-1")
            try await client.basicLogin(appA, headers: Client.platformHeader(token))
            let reply = try await client.form(
                .post,
                "/api/v2/REF30/sessions",
                headers: Client.authorized(appB).merging(Client.platformHeader(token)),
                fields: Client.allSessionFields
            )
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(body["actionName"] as? String == "authorize")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["reasonType"] as? String == "authenticatedSSO")
            #expect(body["url"] as? String == "/api/v2/REF30/decisions/authorize/Cablevision")
            #expect(body["code"] == nil)
            let codes = try await client.send(.get, "/_sim/codes")
            #expect((try codes.json()["codes"] as? [Any])?.count == 1, "only app A's code: \(codes.text)")
        }
    }

    @Test func v2_platformIdentity_invalidHeader_servedWithoutSSO() async throws {
        let secret = "lab-platform-secret"
        let harness = Harness {
            $0.identityIssuers["lab-platform"] = IdentityIssuer(kind: .platform, alg: .hs256, key: secret)
            $0.throttleEnabled = false
        }
        try await harness.run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            let now = Int(harness.clock.epochMillisecondsNow / 1000)
            let claims: [String: Any] = ["iss": "lab-platform", "sub": "u1", "aud": "Adobe", "iat": now, "exp": now + 600]
            let good = hs256Token(claims, secret: secret)
            try await client.basicLogin(appA, headers: Client.platformHeader(good))
            // An external issuer's token is accepted (aud compared case-insensitively).
            #expect(try await client.profiles(appB, headers: Client.platformHeader(good))["Cablevision"]?["type"] as? String == "platformSSO")

            var wrongAudience = claims
            wrongAudience["aud"] = "someone-else"
            var noExpiry = claims
            noExpiry["exp"] = nil
            var expired = claims
            expired["exp"] = now - 1
            let simToken = try await client.platformToken(sub: "u1")
            let tampered = String(simToken.dropLast(2)) + (simToken.hasSuffix("AA") ? "BB" : "AA")
            let invalid = [
                hs256Token(claims, secret: "wrong-secret"),
                hs256Token(wrongAudience, secret: secret),
                hs256Token(noExpiry, secret: secret),
                hs256Token(expired, secret: secret),
                hs256Token(claims, secret: secret, alg: "HS512"),
                tampered,
                "garbage",
            ]
            for token in invalid {
                #expect(try await client.profiles(appB, headers: Client.platformHeader(token)).isEmpty, "\(token)")
                // A service-token header cannot carry a platform issuer's token.
                let sessions = try await client.form(
                    .post,
                    "/api/v2/REF30/sessions",
                    headers: Client.authorized(appB).merging(Client.platformHeader(token)),
                    fields: Client.allSessionFields
                )
                #expect(sessions.status == .ok)
                #expect(try sessions.json()["actionName"] as? String == "authenticate", "\(sessions.text)")
            }
            #expect(try await client.profiles(appB, headers: Client.serviceHeader(good)).isEmpty)

            // The simulator's own token expires too.
            let short = try await client.platformToken(sub: "u2", ttl: 60)
            try await client.basicLogin(appA, mvpd: "DTV", headers: Client.platformHeader(short))
            #expect(try await client.profiles(appB, headers: Client.platformHeader(short))["DTV"] != nil)
            harness.clock.advance(by: .seconds(61))
            #expect(try await client.profiles(appB, headers: Client.platformHeader(short)).isEmpty)
        }
    }

    @Test func v2_profilesCode_ignoresSSOHeaders() async throws {
        try await Harness().run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            let token = try await client.platformToken(sub: "roku-user-1")
            try await client.basicLogin(appA, headers: Client.platformHeader(token))
            // App B logs in with DTV through a code, and polls it with the header: only the code's profile.
            let code = try await client.newCode(appB, fields: "mvpd=DTV&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com")
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            let polled = try await client.send(
                .get,
                "/api/v2/REF30/profiles/code/\(code)",
                headers: Client.authorized(appB, deviceInfo: nil).merging(Client.platformHeader(token))
            )
            let profiles = try #require(try polled.json()["profiles"] as? [String: [String: Any]])
            #expect(profiles.keys.sorted() == ["DTV"])
            #expect(profiles["DTV"]?["type"] as? String == "regular")
        }
    }

    @Test func v2_serviceToken_crossDevice() async throws {
        try await Harness().run { client in
            let tvApp = try await client.credentials()
            let phoneApp = try await client.credentials()
            let onTV = try await client.serviceToken(sub: "jane")
            try await client.basicLogin(tvApp, device: "living-room-tv", headers: Client.serviceHeader(onTV))
            // Another token for the same user (as the identity service would issue on the phone).
            let onPhone = try await client.serviceToken(sub: "jane")
            #expect(onPhone != onTV)
            let profiles = try await client.profiles(phoneApp, device: "phone", headers: Client.serviceHeader(onPhone))
            #expect(profiles["Cablevision"]?["type"] as? String == "serviceTokenSSO")
            #expect(profiles["Cablevision"]?["issuer"] as? String == "Cablevision")
            // Another user, or another issuer's user of the same name, sees nothing.
            #expect(
                try await client.profiles(phoneApp, device: "phone", headers: Client.serviceHeader(try await client.serviceToken(sub: "john")))
                    .isEmpty
            )
            let otherIssuer = try await client.serviceToken(sub: "jane", iss: "other-idp")
            #expect(try await client.profiles(phoneApp, device: "phone", headers: Client.serviceHeader(otherIssuer)).isEmpty)
            // Platform header with a service token: not taken into account.
            #expect(try await client.profiles(phoneApp, device: "phone", headers: Client.platformHeader(onPhone)).isEmpty)
            let key = try await client.send(.get, "/_sim/identity/service-key")
            #expect((try key.json()["pem"] as? String)?.contains("PUBLIC KEY") == true)
        }
    }

    @Test func v2_serviceToken_sharedTTL() async throws {
        let harness = Harness { $0.integrationSettings["REF30"] = ["Cablevision": IntegrationSettings(ttl: 600)] }
        try await harness.run { client in
            let first = try await client.credentials()
            let second = try await client.credentials()
            let token = try await client.serviceToken(sub: "jane", ttl: 7200)
            try await client.basicLogin(first, headers: Client.serviceHeader(token))
            let source = try #require(try await client.profiles(first)["Cablevision"])
            #expect((source["notAfter"] as? Int64 ?? 0) - (source["notBefore"] as? Int64 ?? 0) == 600_000)
            harness.clock.advance(by: .seconds(300))
            let shared = try #require(try await client.profiles(second, device: "device-2", headers: Client.serviceHeader(token))["Cablevision"])
            #expect(shared["notBefore"] as? Int64 == source["notBefore"] as? Int64)
            #expect(shared["notAfter"] as? Int64 == source["notAfter"] as? Int64)
            harness.clock.advance(by: .seconds(300))
            #expect(try await client.profiles(second, device: "device-2", headers: Client.serviceHeader(token)).isEmpty)
        }
    }

    @Test func v2_singleLogout_deletesRegularAndSSO() async throws {
        try await Harness().run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            let token = try await client.platformToken(sub: "roku-user-1")
            try await client.basicLogin(appA, headers: Client.platformHeader(token))
            #expect(try await client.profiles(appB, headers: Client.platformHeader(token))["Cablevision"] != nil)
            let reply = try await client.send(
                .get,
                "/api/v2/REF30/logout/Cablevision",
                headers: Client.authorized(appB).merging(Client.platformHeader(token))
            )
            #expect(reply.status == .ok, "\(reply.text)")
            let entry = try #require((try reply.json()["logouts"] as? [String: [String: Any]])?["Cablevision"])
            #expect(entry["actionName"] as? String == "logout")
            #expect(entry["actionType"] as? String == "interactive")
            let device = Data("device-1".utf8).base64EncodedString()
            let url = try #require(entry["url"] as? String)
            #expect(url.hasPrefix("/adobe-services/logout?"), "\(url)")
            #expect(url.contains("requestor_id=REF30") && url.contains("mso_id=Cablevision") && url.contains("pt_device_id="), "\(url)")
            #expect(url.contains(FormEncoding.encode(device)) || url.contains(device), "\(url)")
            // Both apps are logged out: the link and the linking login's regular profile are gone.
            #expect(try await client.profiles(appB, headers: Client.platformHeader(token)).isEmpty)
            #expect(try await client.profiles(appA, headers: Client.platformHeader(token)).isEmpty)
            let sso = try await client.send(.get, "/_sim/sso")
            #expect((try sso.json()["links"] as? [Any])?.isEmpty == true, "\(sso.text)")
        }
    }

    @Test func v2_basicProfiles_boundToClient() async throws {
        try await Harness().run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            try await client.basicLogin(appA)
            #expect(try await client.profiles(appA)["Cablevision"] != nil)
            #expect(try await client.profiles(appB).isEmpty)
            let session = try await client.createSession(appB)
            #expect(try session.json()["actionName"] as? String == "authenticate")
            let config = try await client.send(.get, "/_sim/config")
            #expect(try config.json()["v2ProfileScope"] as? String == "device+client")
            #expect(try config.json()["v2ProfileScopeFaithful"] as? Bool == true)
        }
        // The non-faithful lab scope shares a device's profiles between its apps.
        try await Harness { $0.v2ProfileScope = .device }.run { client in
            let appA = try await client.credentials()
            let appB = try await client.credentials()
            try await client.basicLogin(appA)
            #expect(try await client.profiles(appB)["Cablevision"]?["type"] as? String == "regular")
            #expect(try await client.profiles(appB, device: "device-2").isEmpty)
            #expect(try await client.send(.get, "/_sim/config").json()["v2ProfileScopeFaithful"] as? Bool == false)
        }
    }
}
