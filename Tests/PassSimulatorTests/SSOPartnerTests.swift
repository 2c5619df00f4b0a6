import Foundation
import Hummingbird
import PassSimulator
import RegcodeEngine
import Testing

@Suite("SSO: REST v2 partner (Apple)")
struct SSOPartnerTests {
    @Test func v2_partner_happyPath_appleSSO_201() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let session = try await client.partnerSession(credentials)
            #expect(session.status == .ok, "\(session.text)")
            let body = try session.json()
            #expect(body["actionName"] as? String == "partner_profile")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["reasonType"] as? String == "none")
            #expect(body["url"] as? String == "/api/v2/REF30/profiles/sso/Apple")
            #expect(body["mvpd"] as? String == "Comcast_SSO")
            #expect(body["serviceProvider"] as? String == "REF30")
            #expect((body["sessionId"] as? String)?.isEmpty == false)
            #expect(body["code"] == nil)
            let authenticationRequest = try #require(body["authenticationRequest"] as? [String: Any])
            #expect(authenticationRequest["type"] as? String == "saml")
            #expect(authenticationRequest["attributesNames"] as? [String] == ["uid", "NameID", "uniqueId"])
            let request = try #require(authenticationRequest["request"] as? String)
            let xml = String(decoding: try #require(Data(base64Encoded: request)), as: UTF8.self)
            #expect(xml.contains("samlp:AuthnRequest"))

            let saml = try client.samlResponse(for: request)

            let created = try await client.partnerProfile(credentials, saml: saml)
            #expect(created.status == .created, "\(created.text)")
            let profiles = try #require(try created.json()["profiles"] as? [String: [String: Any]])
            let profile = try #require(profiles["Comcast_SSO"])
            #expect(profile["type"] as? String == "appleSSO")
            #expect(profile["issuer"] as? String == "Apple")
            let attributes = try #require(profile["attributes"] as? [String: [String: Any]])
            #expect(attributes["userID"]?["value"] as? String == "jane")
            #expect(attributes["householdID"]?["value"] as? String == "hh-jane")
            #expect(attributes["zip"]?["state"] as? String == "enc")

            // Later queries use the basic endpoints, which show the type.
            let listed = try await client.profiles(credentials, headers: Client.withPFS([:], Client.pfs()))
            #expect(listed["Comcast_SSO"]?["type"] as? String == "appleSSO")
            let one = try await client.send(.get, "/api/v2/REF30/profiles/Comcast_SSO", headers: Client.authorized(credentials))
            #expect((try one.json()["profiles"] as? [String: [String: Any]])?["Comcast_SSO"]?["type"] as? String == "appleSSO")

            // Decisions accept the profile with its PFS; another session is answered authorize/authenticatedSSO.
            let decision = try await client.authorizeDecision(credentials, mvpd: "Comcast_SSO", headers: Client.withPFS([:], Client.pfs()))
            #expect(decision.status == .ok, "\(decision.text)")
            let again = try await client.partnerSession(credentials)
            #expect(try again.json()["actionName"] as? String == "authorize")
            #expect(try again.json()["reasonType"] as? String == "authenticatedSSO")

            // The SAML answer is good for one exchange.
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: saml),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
        }
    }

    @Test func regularProfilesShowTheirType() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await client.basicLogin(credentials)
            let profile = try #require(try await client.profiles(credentials)["Cablevision"])
            #expect(profile["type"] as? String == "regular")
            #expect(profile["issuer"] as? String == "Cablevision")
        }
    }

    @Test func v2_partner_unknownPartner() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await client.partnerSession(credentials, partner: "Google"),
                status: .badRequest,
                code: "invalid_parameter_partner"
            )
            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/profiles/sso/Roku", headers: Client.authorized(credentials), fields: "SAMLResponse=x"),
                status: .badRequest,
                code: "invalid_parameter_partner"
            )
        }
    }

    @Test func v2_partner_fallbacks_pfs() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            // A provider that maps to an MVPD but is expired: a code for that MVPD.
            let expired = try await client.partnerSession(credentials, pfs: Client.pfs(expires: 1))
            #expect(expired.status == .ok, "\(expired.text)")
            let body = try expired.json()
            #expect(body["actionName"] as? String == "authenticate")
            #expect(body["actionType"] as? String == "interactive")
            #expect(body["reasonType"] as? String == "pfs_fallback")
            #expect(body["mvpd"] as? String == "Comcast_SSO")
            let code = try #require(body["code"] as? String)
            #expect(body["url"] as? String == "/api/v2/authenticate/REF30/\(code)")
            #expect(body["notBefore"] is String && body["notAfter"] is String)
            #expect(body["authenticationRequest"] == nil)
            // No provider to take the MVPD from: a code whose session still needs one.
            for pfs in [Client.pfs(access: "denied", provider: nil, expires: nil), nil, "not base64!"] {
                let reply = try await client.partnerSession(credentials, pfs: pfs)
                #expect(reply.status == .ok, "\(reply.text)")
                let body = try reply.json()
                #expect(body["actionName"] as? String == "resume")
                #expect(body["reasonType"] as? String == "pfs_fallback")
                #expect(body["missingParameters"] as? [String] == ["mvpd"])
                let code = try #require(body["code"] as? String)
                #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
                #expect(body["authenticationRequest"] == nil)
            }
        }
    }

    @Test func v2_partner_fallbacks_configuration() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            func reason(_ reply: Reply) throws -> String? { try reply.json()["reasonType"] as? String }
            // Spectrum is only in Apple's picker.
            let picker = try await client.partnerSession(credentials, pfs: Client.pfs(provider: "Spectrum"))
            #expect(try reason(picker) == "configuration_fallback", "\(picker.text)")
            #expect(try picker.json()["mvpd"] as? String == "Spectrum")
            #expect(try picker.json()["actionName"] as? String == "authenticate")
            // Not an Apple device.
            #expect(try reason(try await client.partnerSession(credentials, deviceInfo: Client.androidDeviceInfo)) == "configuration_fallback")
            // Apple SSO switched off for tvOS only.
            let put = try await client.send(
                .put,
                "/_sim/integrations/REF30/Comcast_SSO",
                headers: [.contentType: "application/json"],
                body: #"{"sso":{"appleTvos":false}}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            #expect(try reason(try await client.partnerSession(credentials)) == "configuration_fallback")
            #expect(try reason(try await client.partnerSession(credentials, deviceInfo: Client.iOSDeviceInfo)) == "none")
        }
    }

    @Test func v2_partner_fallbacks_missingParameters() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.partnerSession(credentials, fields: "domainName=adobe.com")
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(body["actionName"] as? String == "resume")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["reasonType"] as? String == "missing_parameters_fallback")
            #expect(body["missingParameters"] as? [String] == ["redirectUrl"])
            let code = try #require(body["code"] as? String)
            #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
            #expect(body["mvpd"] as? String == "Comcast_SSO")
        }
    }

    @Test func v2_partner_domainNameTheRequestorDoesNotListIsRefused() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await client.partnerSession(credentials, fields: "domainName=example.org&redirectUrl=https%3A%2F%2Fadobe.com"),
                status: .badRequest,
                code: "invalid_parameter_domain_name"
            )
            let accepted = try await client.partnerSession(credentials, fields: "domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com")
            #expect(accepted.status == .ok, "\(accepted.text)")
        }
    }

    @Test func v2_partner_degraded() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            let put = try await client.send(
                .put,
                "/_sim/integrations/REF30/Comcast_SSO",
                headers: [.contentType: "application/json"],
                body: #"{"degraded":true}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            let session = try await client.partnerSession(credentials)
            let body = try session.json()
            #expect(body["actionName"] as? String == "authorize")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["reasonType"] as? String == "degraded")
            #expect(body["url"] as? String == "/api/v2/REF30/decisions/authorize/Comcast_SSO")

            let profile = try await client.partnerProfile(credentials, saml: saml)
            #expect(profile.status == .ok, "\(profile.text)")
            let degraded = try #require((try profile.json()["profiles"] as? [String: [String: Any]])?["Comcast_SSO"])
            #expect(degraded["type"] as? String == "degraded")
            #expect(degraded["issuer"] as? String == "Adobe")
        }
    }

    /// Each PFS problem and its code on `profiles/sso/Apple` (mapping INFERRED in sso.md §3.3).
    @Test(
        arguments: [
            (Client.pfs(access: nil), "invalid_header_pfs_permission_access_not_present"),
            (Client.pfs(access: "notDetermined"), "invalid_header_pfs_permission_access_not_determined"),
            (Client.pfs(access: "denied"), "invalid_header_pfs_permission_access_not_granted"),
            (Client.pfs(access: "restricted"), "invalid_header_pfs_permission_access_not_granted"),
            (Client.pfs(provider: "NoSuchProvider"), "invalid_header_pfs_provider_id_not_determined"),
            (Client.pfs(provider: "Spectrum"), "invalid_header_pfs_provider_id_mismatch"),
            (Client.pfs(expires: 1_000), "invalid_header_pfs_provider_info_expired"),
        ]
    )
    func v2_pfs_errorCodes(pfs: String, code: String) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            try expectEnhancedError(try await client.partnerProfile(credentials, saml: saml, pfs: pfs), status: .badRequest, code: code)
            // A missing header is a permission that is not present.
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: saml, pfs: nil),
                status: .badRequest,
                code: "invalid_header_pfs_permission_access_not_present"
            )
            // The answer was not consumed by the refusals.
            #expect(try await client.partnerProfile(credentials, saml: saml).status == .created)
        }
    }

    @Test func enforcePlatformPermissionsOffSkipsThePermissionChecks() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let put = try await client.send(
                .put,
                "/_sim/mvpds/Comcast_SSO",
                headers: [.contentType: "application/json"],
                body:
                    #"{"platformMappingId":"Comcast","boardingStatus":"SUPPORTED","enablePlatformServices":true,"displayInPlatformPicker":true,"enforcePlatformPermissions":false}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            #expect(try put.json()["enforcePlatformPermissions"] as? Bool == false)
            let saml = try await client.partnerSAML(credentials)
            #expect(try await client.partnerProfile(credentials, saml: saml, pfs: Client.pfs(access: "denied")).status == .created)
        }
    }

    @Test func v2_partner_samlMustBeThisSimulatorsAnswerForThisDevice() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            // Tampered: another user inside the signed assertion.
            let xml = String(decoding: try #require(Data(base64Encoded: saml)), as: UTF8.self)
            let forged = Data(xml.replacingOccurrences(of: ">jane<", with: ">mallory<").utf8).base64EncodedString()
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: forged),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: "bm90IHNhbWw="),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            // Another device (or client) cannot use the answer.
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: saml, device: "device-2"),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            let other = try await client.credentials()
            try expectEnhancedError(try await client.partnerProfile(other, saml: saml), status: .badRequest, code: "invalid_parameter_saml_response")
        }
    }

    @Test func v2_partner_expiredAssertionIsRefused() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            harness.clock.advance(by: .seconds(301))
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: saml),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
        }
    }

    /// Adobe's body has no `mvpd`: the MVPD is the PFS provider's. An `mvpd` field is not Adobe's and changes nothing.
    @Test func v2_partner_mvpdComesFromThePFSProvider() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let ignored = try await client.partnerSession(credentials, fields: "mvpd=Cablevision&" + Client.partnerFields)
            #expect(try ignored.json()["mvpd"] as? String == "Comcast_SSO", "\(ignored.text)")
            #expect(try ignored.json()["actionName"] as? String == "partner_profile")
            // A provider no MVPD maps from: the basic flow without an MVPD (resume for it).
            let unknown = try await client.partnerSession(credentials, pfs: Client.pfs(provider: "NoSuchProvider"))
            let body = try unknown.json()
            #expect(body["reasonType"] as? String == "pfs_fallback", "\(unknown.text)")
            #expect(body["actionName"] as? String == "resume")
            #expect(body["missingParameters"] as? [String] == ["mvpd"])
            #expect(body["mvpd"] == nil)
        }
    }

    /// Only answers signed by the identity provider trusted for the MVPD are exchanged.
    @Test func v2_partner_untrustedIdentityProviderIsRefused() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let session = try await client.partnerSession(credentials)
            let request = try #require((try session.json()["authenticationRequest"] as? [String: Any])?["request"] as? String)
            let stranger = try client.samlResponse(for: request, identityProvider: TVProviderIdentityProvider())
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: stranger),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            // Signed by the trusted key but issued by another provider than the request's MVPD maps from.
            let otherProvider = try client.samlResponse(for: request, provider: "Spectrum")
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: otherProvider),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            #expect(try await client.partnerProfile(credentials, saml: try client.samlResponse(for: request)).status == .created)
        }
    }

    @Test func v2_partner_perMVPDKeyAndUnsignedAcceptance() async throws {
        let comcast = TVProviderIdentityProvider()
        try await Harness {
            $0.samlTrust.keyPEMByMVPD["Comcast_SSO"] = comcast.publicKeyPEM
        }.run { client in
            let credentials = try await client.credentials()
            let session = try await client.partnerSession(credentials)
            let request = try #require((try session.json()["authenticationRequest"] as? [String: Any])?["request"] as? String)
            // The MVPD's own key replaces the default one.
            try expectEnhancedError(
                try await client.partnerProfile(credentials, saml: try client.samlResponse(for: request)),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            #expect(
                try await client.partnerProfile(credentials, saml: try client.samlResponse(for: request, identityProvider: comcast)).status
                    == .created
            )
        }
        try await Harness {
            $0.samlTrust = SAMLTrust()
            $0.samlTrust.acceptUnsigned = true
        }.run { client in
            let credentials = try await client.credentials()
            #expect(try await client.partnerProfile(credentials, saml: try await client.partnerSAML(credentials)).status == .created)
        }
    }

    @Test func v2_partner_logout() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            #expect(try await client.partnerProfile(credentials, saml: saml).status == .created)
            let reply = try await client.send(.get, "/api/v2/REF30/logout/Comcast_SSO", headers: Client.authorized(credentials))
            #expect(reply.status == .ok, "\(reply.text)")
            let entry = try #require((try reply.json()["logouts"] as? [String: [String: Any]])?["Comcast_SSO"])
            #expect(entry["actionName"] as? String == "partner_logout")
            #expect(entry["actionType"] as? String == "partner_interactive")
            #expect(entry["url"] == nil)
            #expect(try await client.profiles(credentials).isEmpty)
        }
    }

    @Test func v2_partner_decisionsValidateThePFSHeader() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            #expect(try await client.partnerProfile(credentials, saml: saml).status == .created)
            try expectEnhancedError(
                try await client.authorizeDecision(credentials, mvpd: "Comcast_SSO", headers: Client.withPFS([:], Client.pfs(access: "denied"))),
                status: .badRequest,
                code: "invalid_header_pfs_permission_access_not_granted"
            )
            #expect(try await client.authorizeDecision(credentials, mvpd: "Comcast_SSO").status == .ok)
            // A bad PFS on GET profiles only hides the appleSSO profile.
            #expect(try await client.profiles(credentials, headers: Client.withPFS([:], Client.pfs(access: "denied"))).isEmpty)
        }
    }

    @Test func decisionsCanRequireThePFSHeader() async throws {
        try await Harness { $0.requirePFSForAppleSSODecisions = true }.run { client in
            let credentials = try await client.credentials()
            let saml = try await client.partnerSAML(credentials)
            #expect(try await client.partnerProfile(credentials, saml: saml).status == .created)
            try expectEnhancedError(
                try await client.authorizeDecision(credentials, mvpd: "Comcast_SSO"),
                status: .badRequest,
                code: "invalid_header_pfs_permission_access_not_present"
            )
            #expect(try await client.authorizeDecision(credentials, mvpd: "Comcast_SSO", headers: Client.withPFS([:], Client.pfs())).status == .ok)
        }
    }
}
