import Foundation
import Hummingbird
import PassSimulator
import RegcodeEngine
import Testing

/// Replays every single sign-on request sample of Adobe's REST API v2 pages (`AdobeSamples/sso-samples.json`, MIT,
/// `AdobeDocs/pass.en`) against pass-sim, configured with the samples' requestor and MVPDs, and checks the answer
/// against the one Adobe documents.
///
/// A sample is sent as written (method, target, headers, body) except for what only Adobe's own backend could
/// accept: the bearer token is one pass-sim issued; an SSO token (`Adobe-Subject-Token`, `AD-Service-Token`) is one
/// pass-sim's identity issuer signed for the same `sub` (the samples' are signed by Adobe's test issuers); the
/// placeholder `${degradedMvpd}` names a degraded MVPD; the SAML answer is the TV Provider's for a live request.
@Suite("pass-sim answers Adobe's SSO samples as documented")
struct AdobeSSOSampleReplayTests {
    struct Sample: Decodable {
        var source: String
        var sample: String
        var method: String
        var target: String
        var headers: [[String]]
        var body: String?
        var status: Int
        var response: String

        func header(_ name: String) -> String? { headers.first { $0[0] == name }?[1] }

        /// The documented answer as JSON (the samples elide long values with `....`, inside strings only).
        var documented: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(response.utf8)) as? [String: Any]) ?? [:]
        }
    }

    static let samples: [Sample] = {
        struct File: Decodable { var samples: [Sample] }
        guard let url = Bundle.module.url(forResource: "sso-samples", withExtension: "json", subdirectory: "AdobeSamples"),
            let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data)
        else { return [] }
        return file.samples
    }()

    static let degradedMVPD = "DegradedMVPD"
    /// The device of every sample (`AP-Device-Identifier: fingerprint YmEyM2Qx…`).
    static let sampleDevice = "ba23d141-d715-561c-94f4-e9e4c966b1eb"

    /// The samples' MVPDs: `Cablevision` onboarded for Apple under its own name (the PFS samples' provider id), the
    /// SSO samples' `AdobeShibboleth`, `AdobePass_SMI`, `Spectrum`, `Comcast_SSO`, and a degraded one.
    static func configure(_ configuration: inout SimulatorConfiguration) {
        let apple = MVPDPlatform(platformMappingId: nil, boardingStatus: .supported, enablePlatformServices: true, displayInPlatformPicker: true)
        func onboarded(_ id: String, as appleID: String) -> SimulatedMVPD {
            var platform = apple
            platform.platformMappingId = appleID
            return SimulatedMVPD(id: id, displayName: id, platform: platform)
        }
        configuration.mvpds = [
            onboarded("Cablevision", as: "Cablevision"),
            onboarded("Comcast_SSO", as: "Comcast"),
            onboarded(Self.degradedMVPD, as: Self.degradedMVPD),
            SimulatedMVPD(id: "Spectrum", displayName: "Spectrum"),
            SimulatedMVPD(id: "AdobeShibboleth", displayName: "AdobeShibboleth"),
            SimulatedMVPD(id: "AdobePass_SMI", displayName: "AdobePass_SMI"),
        ]
        configuration.integrationSettings["REF30", default: [:]][Self.degradedMVPD] = IntegrationSettings(degraded: true)
    }

    static func sample(_ source: String, _ number: Int) throws -> Sample {
        try #require(samples.first { $0.source.hasSuffix(source) && $0.sample.hasPrefix("\(number).") }, "sample \(number) of \(source)")
    }

    /// Sends `sample` as written but for the substitutions above.
    static func replay(
        _ sample: Sample,
        client: Client,
        credentials: Credentials,
        ssoToken: String? = nil,
        body: String? = nil
    ) async throws -> Reply {
        func substitute(_ text: String) -> String { text.replacingOccurrences(of: "${degradedMvpd}", with: Self.degradedMVPD) }
        var headers: HTTPFields = [:]
        for pair in sample.headers {
            var value = pair[1]
            switch pair[0] {
            case "Authorization": value = "Bearer \(credentials.accessToken)"
            case "Adobe-Subject-Token", "AD-Service-Token": value = ssoToken ?? value
            case "AP-Partner-Framework-Status":
                if let data = Data(base64Encoded: value), let text = String(data: data, encoding: .utf8), text.contains("${degradedMvpd}") {
                    value = Data(substitute(text).utf8).base64EncodedString()
                }
            default: break
            }
            headers[Client.name(pair[0])] = value
        }
        let method = HTTPRequest.Method(rawValue: sample.method)!
        return try await client.send(method, substitute(sample.target), headers: headers, body: (body ?? sample.body).map(substitute))
    }

    /// The `sub` of a sample's SSO token. The pages elide the tokens (`…`, a cut payload), so the payload is read as
    /// far as it decodes and the subject taken as far as it goes.
    static func subject(ofToken token: String) throws -> String {
        let payload = try #require(token.split(separator: ".").dropFirst().first.map(String.init))
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/").filter { !$0.isWhitespace }
        base64 = String(base64.prefix(base64.count / 4 * 4))
        let data = try #require(Data(base64Encoded: base64))
        let text = String(decoding: data, as: UTF8.self)
        let start = try #require(text.range(of: #""sub":""#))
        let subject = text[start.upperBound...].prefix { $0 != "\"" }
        #expect(!subject.isEmpty)
        return String(subject)
    }

    @Test func theSamplesAreAllThere() {
        // Partner: 5 × sessions/sso, 2 × profiles/sso; service token and platform identity: 2 × profiles,
        // 2 × profiles/{mvpd}, 2 × logout.
        #expect(Self.samples.count == 13)
        #expect(Self.samples.allSatisfy { !$0.response.isEmpty })
    }

    // MARK: Partner (Apple)

    @Test func partnerSessionSamples() async throws {
        let source = "rest-api-v2-partner-single-sign-on-apis-retrieve-partner-authentication-request.md"
        try await Harness(Self.configure).run { client in
            let credentials = try await client.credentials()
            func check(_ number: Int, _ expectations: (([String: Any], [String: Any]) throws -> Void)? = nil) async throws {
                let sample = try Self.sample(source, number)
                let reply = try await Self.replay(sample, client: client, credentials: credentials)
                #expect(reply.status.code == sample.status, "sample \(number): \(reply.text)")
                let body = try reply.json()
                let documented = sample.documented
                for key in ["actionName", "actionType", "reasonType", "serviceProvider"] {
                    #expect(body[key] as? String == documented[key] as? String, "sample \(number) \(key): \(reply.text)")
                }
                try expectations?(body, documented)
            }
            // 1: the partner request, for the MVPD the PFS provider maps to.
            try await check(1) { body, documented in
                #expect(body["mvpd"] as? String == "Cablevision")
                #expect(body["url"] as? String == documented["url"] as? String)
                let request = try #require(body["authenticationRequest"] as? [String: Any])
                #expect(request["type"] as? String == "saml")
                #expect(request["attributesNames"] as? [String] == ["uid", "NameID", "uniqueId"])
            }
            // 2: the PFS names the degraded MVPD.
            try await check(2) { body, _ in
                #expect(body["url"] as? String == "/api/v2/REF30/decisions/authorize/\(Self.degradedMVPD)")
                #expect(body["mvpd"] as? String == Self.degradedMVPD)
            }
            // 5: redirectUrl missing.
            try await check(5) { body, documented in
                #expect(body["missingParameters"] as? [String] == documented["missingParameters"] as? [String])
                let code = try #require(body["code"] as? String)
                #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
            }
            // 3: permission denied, no provider. The documented answer names `Cablevision` and `authenticate`;
            // neither the body nor this header names an MVPD, so pass-sim's fallback session still needs one
            // (`resume`, missing `mvpd`). The reason is Adobe's.
            let denied = try await Self.replay(try Self.sample(source, 3), client: client, credentials: credentials)
            #expect(denied.status == .ok, "\(denied.text)")
            #expect(try denied.json()["reasonType"] as? String == "pfs_fallback")
            #expect(try denied.json()["code"] is String)
            #expect(try denied.json()["missingParameters"] as? [String] == ["mvpd"])
        }
        // 4: the same request as 1 with partner SSO switched off for tvOS on the Adobe side.
        try await Harness {
            Self.configure(&$0)
            $0.integrationSettings["REF30", default: [:]]["Cablevision"] = IntegrationSettings(sso: SSOPlatforms(appleTvos: false))
        }.run { client in
            let credentials = try await client.credentials()
            let sample = try Self.sample(source, 4)
            let reply = try await Self.replay(sample, client: client, credentials: credentials)
            let body = try reply.json()
            for key in ["actionName", "actionType", "reasonType", "mvpd"] {
                #expect(body[key] as? String == sample.documented[key] as? String, "\(key): \(reply.text)")
            }
            let code = try #require(body["code"] as? String)
            #expect(body["url"] as? String == "/api/v2/authenticate/REF30/\(code)")
        }
    }

    @Test func partnerProfileSamples() async throws {
        let source = "rest-api-v2-partner-single-sign-on-apis-retrieve-profile-using-partner-authentication-response.md"
        try await Harness(Self.configure).run { client in
            let credentials = try await client.credentials()
            let sample = try Self.sample(source, 1)
            // Adobe's own assertion answers no request of this backend and is signed by no trusted provider.
            try expectEnhancedError(
                try await Self.replay(sample, client: client, credentials: credentials),
                status: .badRequest,
                code: "invalid_parameter_saml_response"
            )
            // The same request with the TV Provider's answer to a live request: Adobe's documented profile.
            let session = try await Self.replay(
                try Self.sample("rest-api-v2-partner-single-sign-on-apis-retrieve-partner-authentication-request.md", 1),
                client: client,
                credentials: credentials
            )
            let request = try #require((try session.json()["authenticationRequest"] as? [String: Any])?["request"] as? String)
            let saml = try client.samlResponse(for: request, provider: "Cablevision")
            let created = try await Self.replay(sample, client: client, credentials: credentials, body: "SAMLResponse=\(FormEncoding.encode(saml))")
            #expect(created.status.code == sample.status, "\(created.text)")
            let profile = try #require((try created.json()["profiles"] as? [String: [String: Any]])?["Cablevision"])
            let documented = try #require((sample.documented["profiles"] as? [String: [String: Any]])?["Cablevision"])
            #expect(profile["type"] as? String == documented["type"] as? String)
            #expect(profile["issuer"] as? String == documented["issuer"] as? String)
            #expect(
                Set((profile["attributes"] as? [String: Any] ?? [:]).keys) == Set((documented["attributes"] as? [String: Any] ?? [:]).keys)
            )
        }
        // 2: the degraded MVPD.
        try await Harness(Self.configure).run { client in
            let credentials = try await client.credentials()
            let sample = try Self.sample(source, 2)
            let session = try await Self.replay(
                try Self.sample("rest-api-v2-partner-single-sign-on-apis-retrieve-partner-authentication-request.md", 1),
                client: client,
                credentials: credentials
            )
            let request = try #require((try session.json()["authenticationRequest"] as? [String: Any])?["request"] as? String)
            // Degradation switched on after the request was issued.
            let put = try await client.send(
                .put,
                "/_sim/integrations/REF30/Cablevision",
                headers: [.contentType: "application/json"],
                body: #"{"degraded":true}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            let saml = try client.samlResponse(for: request, provider: "Cablevision")
            var replayed = sample
            replayed.headers = replayed.headers.map { $0[0] == "AP-Partner-Framework-Status" ? [$0[0], Client.pfs(provider: "Cablevision")] : $0 }
            let reply = try await Self.replay(replayed, client: client, credentials: credentials, body: "SAMLResponse=\(FormEncoding.encode(saml))")
            #expect(reply.status.code == sample.status, "\(reply.text)")
            let profile = try #require((try reply.json()["profiles"] as? [String: [String: Any]])?["Cablevision"])
            let documented = try #require((sample.documented["profiles"] as? [String: [String: Any]])?["${degradedMvpd}"])
            #expect(profile["type"] as? String == documented["type"] as? String)
            #expect(profile["issuer"] as? String == documented["issuer"] as? String)
        }
    }

    // MARK: Platform identity and service token

    /// Profiles and logout samples with `AD-Service-Token` or `Adobe-Subject-Token`: another device of the same
    /// user logged in to the sample's MVPD with the same identity first (the single sign-on the samples show).
    @Test(arguments: [
        ("rest-api-v2-profiles-apis-retrieve-profiles.md", 2, "AdobeShibboleth"),
        ("rest-api-v2-profiles-apis-retrieve-profiles.md", 3, "AdobePass_SMI"),
        ("rest-api-v2-profiles-apis-retrieve-profile-for-specific-mvpd.md", 2, "AdobeShibboleth"),
        ("rest-api-v2-profiles-apis-retrieve-profile-for-specific-mvpd.md", 3, "AdobePass_SMI"),
        ("rest-api-v2-logout-apis-initiate-logout-for-specific-mvpd.md", 3, "Spectrum"),
        ("rest-api-v2-logout-apis-initiate-logout-for-specific-mvpd.md", 4, "Comcast_SSO"),
    ])
    func identitySamples(source: String, number: Int, mvpd: String) async throws {
        try await Harness(Self.configure).run { client in
            let credentials = try await client.credentials()
            let sample = try Self.sample(source, number)
            let serviceToken = sample.header("AD-Service-Token")
            let original = try #require(serviceToken ?? sample.header("Adobe-Subject-Token"))
            let subject = try Self.subject(ofToken: original)
            let token = serviceToken != nil ? try await client.serviceToken(sub: subject) : try await client.platformToken(sub: subject)
            let header = serviceToken != nil ? Client.serviceHeader(token) : Client.platformHeader(token)
            try await client.basicLogin(credentials, device: "first-device", mvpd: mvpd, headers: header)

            let reply = try await Self.replay(sample, client: client, credentials: credentials, ssoToken: token)
            #expect(reply.status.code == sample.status, "\(reply.text)")
            let body = try reply.json()
            if let documented = sample.documented["profiles"] as? [String: [String: Any]] {
                let expected = try #require(documented[mvpd])
                let profile = try #require((body["profiles"] as? [String: [String: Any]])?[mvpd], "\(reply.text)")
                #expect(profile["type"] as? String == expected["type"] as? String)
                #expect(profile["issuer"] as? String == expected["issuer"] as? String)
                #expect(
                    Set((profile["attributes"] as? [String: Any] ?? [:]).keys).isSuperset(of: ["upstreamUserID", "userID", "mvpd"]),
                    "\(reply.text)"
                )
            } else {
                let expected = try #require((sample.documented["logouts"] as? [String: [String: Any]])?[mvpd])
                let entry = try #require((body["logouts"] as? [String: [String: Any]])?[mvpd], "\(reply.text)")
                #expect(entry["actionName"] as? String == expected["actionName"] as? String)
                #expect(entry["actionType"] as? String == expected["actionType"] as? String)
                #expect((entry["url"] as? String)?.hasPrefix("/adobe-services/logout?") == true, "\(reply.text)")
                // Single logout: the first device's profile went too.
                #expect(try await client.profiles(credentials, device: "first-device")[mvpd] == nil)
            }
        }
    }

    // MARK: What Adobe refuses

    @Test func refusalsCarryAdobesCodes() async throws {
        let source = "rest-api-v2-partner-single-sign-on-apis-retrieve-partner-authentication-request.md"
        try await Harness(Self.configure).run { client in
            let credentials = try await client.credentials()
            var sample = try Self.sample(source, 1)
            let good = sample
            sample.target = "/api/v2/REF30/sessions/sso/Google"
            try expectEnhancedError(
                try await Self.replay(sample, client: client, credentials: credentials),
                status: .badRequest,
                code: "invalid_parameter_partner"
            )
            sample = good
            sample.headers.removeAll { $0[0] == "AP-Device-Identifier" }
            try expectEnhancedError(
                try await Self.replay(sample, client: client, credentials: credentials),
                status: .badRequest,
                code: "invalid_header_device_identifier"
            )
            sample = good
            sample.target = "/api/v2/NOSUCH/sessions/sso/Apple"
            try expectEnhancedError(
                try await Self.replay(sample, client: client, credentials: credentials),
                status: .badRequest,
                code: "invalid_parameter_service_provider"
            )
            let unauthorized = try await client.send(
                .post,
                good.target,
                headers: [.contentType: "application/x-www-form-urlencoded", Client.name("X-Device-Info"): Client.deviceInfo],
                body: good.body
            )
            #expect(unauthorized.status == .unauthorized, "\(unauthorized.text)")
        }
    }
}
