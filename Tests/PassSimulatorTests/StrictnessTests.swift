import Foundation
import Hummingbird
import PassSimulator
import Testing

/// The checks Adobe makes, on by default, each off with `lenient`.
@Suite("Strict by default, lenient on demand")
struct StrictnessTests {
    static let narrowStatement =
        (try? Client.statementKey.issue(softwareId: "narrow-app", redirectURIs: ["adobepass://com.example"])) ?? "unsigned"

    /// Registers with `statement` and gets a token, checking both succeed.
    static func credentials(_ client: Client, statement: String) async throws -> Credentials {
        let registration = try await client.register(statement: statement)
        #expect(registration.status == .created, "\(registration.text)")
        let body = try registration.json()
        let clientId = try #require(body["client_id"] as? String)
        let clientSecret = try #require(body["client_secret"] as? String)
        let token = try await client.token("client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials")
        let accessToken = try #require(try token.json()["access_token"] as? String)
        return Credentials(clientId: clientId, clientSecret: clientSecret, accessToken: accessToken)
    }

    static func narrow(lenient: Bool) -> Harness {
        Harness {
            $0.serviceProviders = ["REF30", "OTHER"]
            $0.approvedSoftwareStatements["narrow-app"] = ["REF30"]
            $0.lenient = lenient
        }
    }

    // MARK: Software statements and tokens

    @Test func tokensWorkOnlyForTheRequestorsOfTheirStatement() async throws {
        try await Self.narrow(lenient: false).run { client in
            let credentials = try await Self.credentials(client, statement: Self.narrowStatement)
            #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials)).status == .ok)
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/OTHER/configuration", headers: Client.authorized(credentials)),
                status: .unauthorized,
                code: "invalid_access_token_service_provider",
                action: "application-registration"
            )
            try expectEnhancedError(
                try await client.createSession(credentials, sp: "OTHER"),
                status: .unauthorized,
                code: "invalid_access_token_service_provider",
                action: "application-registration"
            )
            // v1 with the same token.
            let v1 = try await client.regcode(Client.bearer(credentials), requestor: "OTHER")
            try expectClassicError(v1, status: .unauthorized, message: "Not Authorized")
            #expect(try await client.regcode(Client.bearer(credentials)).status == .created)
            // A statement approved for every requestor reaches both.
            let broad = try await client.credentials()
            #expect(try await client.send(.get, "/api/v2/OTHER/configuration", headers: Client.authorized(broad)).status == .ok)
        }
    }

    @Test func lenientTokensWorkForAnyRequestor() async throws {
        try await Self.narrow(lenient: true).run { client in
            let credentials = try await Self.credentials(client, statement: Self.narrowStatement)
            #expect(try await client.send(.get, "/api/v2/OTHER/configuration", headers: Client.authorized(credentials)).status == .ok)
            #expect(try await client.regcode(Client.bearer(credentials), requestor: "OTHER").status == .created)
        }
    }

    @Test func unsignedStatementsAreInvalidAndOnlyApprovedOnesPassWhenAccepted() async throws {
        let unknown = Client.jwt(payload: #"{"software_id":"somebody-else"}"#)
        let embedded = Client.jwt(payload: #"{"software_id":"\#(SimulatorConfiguration.embeddedSoftwareId)"}"#)
        try await Harness().run { client in
            try expectDCRError(try await client.register(statement: unknown), "invalid_software_statement")
            try expectDCRError(try await client.register(statement: embedded), "invalid_software_statement")
        }
        try await Harness { $0.acceptUnsignedStatements = true }.run { client in
            try expectDCRError(try await client.register(statement: unknown), "unapproved_software_statement")
            // regcoded's embedded statement is approved by default.
            #expect(try await client.register(statement: embedded).status == .created)
        }
        try await Harness { $0.lenient = true }.run { client in
            let registration = try await client.register(statement: unknown)
            #expect(registration.status == .created)
        }
    }

    @Test func theDaemonsEmbeddedStatementIsApproved() {
        #expect(SimulatorConfiguration().approves(softwareId: "regcoded-embedded", signed: false))
        #expect(!SimulatorConfiguration().approves(softwareId: "somebody-else", signed: false))
        #expect(SimulatorConfiguration().approves(softwareId: "somebody-else", signed: true))
        #expect(SimulatorConfiguration().softwareStatement("regcoded-embedded", covers: "REF30"))
    }

    // MARK: Requestors and integrations

    @Test func unknownRequestorsAreRejected() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/NBC/configuration", headers: Client.authorized(credentials)),
                status: .badRequest,
                code: "invalid_parameter_service_provider"
            )
            try expectClassicError(
                try await client.regcode(Client.bearer(credentials), requestor: "NBC"),
                status: .badRequest,
                message: "Bad Request"
            )
        }
        try await Harness { $0.lenient = true }.run { client in
            let credentials = try await client.credentials()
            #expect(try await client.send(.get, "/api/v2/NBC/configuration", headers: Client.authorized(credentials)).status == .ok)
            #expect(try await client.regcode(Client.bearer(credentials), requestor: "NBC").status == .created)
        }
    }

    static func integrated(lenient: Bool) -> Harness {
        Harness {
            $0.integrations = ["REF30": ["Cablevision", "Spectrum"]]
            $0.lenient = lenient
        }
    }

    @Test func mvpdsNotIntegratedWithTheRequestorAreRejected() async throws {
        try await Self.integrated(lenient: false).run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials)
            try expectEnhancedError(
                try await client.createSession(credentials, fields: "mvpd=DTV&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"),
                status: .badRequest,
                code: "invalid_integration"
            )
            let code = try await client.newCode(credentials, fields: "")
            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/sessions/\(code)", headers: headers, fields: "mvpd=DTV"),
                status: .badRequest,
                code: "invalid_integration"
            )
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/profiles/DTV", headers: headers),
                status: .badRequest,
                code: "invalid_integration"
            )
            try expectEnhancedError(
                try await client.jsonPost("/api/v2/REF30/decisions/authorize/DTV", #"{"resources":["REF30"]}"#, headers: headers),
                status: .badRequest,
                code: "invalid_integration"
            )
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/logout/DTV", headers: headers),
                status: .badRequest,
                code: "invalid_integration"
            )
            let v1 = try await client.regcode(Client.bearer(credentials), fields: "deviceId=dGVzdA&mvpd=DTV")
            try expectClassicError(v1, status: .badRequest, message: "Bad Request")
            // An integrated MVPD is fine, and the picker offers only integrated ones.
            #expect(try await client.createSession(credentials, device: "tv-2", fields: "mvpd=Spectrum").status == .ok)
            let picker = try await client.send(.get, "/api/v2/authenticate/REF30/\(code)")
            #expect(picker.text.contains("value=\"Cablevision\"") && picker.text.contains("value=\"Spectrum\""))
            #expect(!picker.text.contains("value=\"DTV\""))
            let login = try await client.send(.get, "/_sim/mvpd/login?code=\(code)&sp=REF30&mvpd=DTV")
            #expect(login.status == .badRequest)
            #expect(login.text.contains("not available"))
            // Automatic approval picks an integrated MVPD.
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
        }
    }

    @Test func lenientAcceptsAnyConfiguredMVPD() async throws {
        try await Self.integrated(lenient: true).run { client in
            let credentials = try await client.credentials()
            #expect(
                try await client.createSession(credentials, fields: "mvpd=DTV&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com").status == .ok
            )
            #expect(try await client.send(.get, "/api/v2/REF30/profiles/DTV", headers: Client.authorized(credentials)).status == .ok)
            #expect(try await client.regcode(Client.bearer(credentials), fields: "deviceId=dGVzdA&mvpd=DTV").status == .created)
        }
    }

    @Test func withoutIntegrationsEveryMVPDIsIntegratedWithEveryRequestor() {
        let configuration = SimulatorConfiguration()
        #expect(configuration.mvpds.allSatisfy { configuration.integrates(serviceProvider: "REF30", mvpd: $0.id) })
    }

    // MARK: Content types

    @Test func dcrNeedsItsDocumentedContentTypes() async throws {
        try await Harness().run { client in
            let body = #"{"software_statement":"\#(Client.softwareStatement)"}"#
            var headers = Client.dcrHeaders
            headers[.contentType] = "text/plain"
            try expectDCRError(try await client.send(.post, "/o/client/register", headers: headers, body: body), "invalid_request")
            try expectDCRError(try await client.send(.post, "/o/client/register", headers: Client.dcrHeaders, body: body), "invalid_request")
            let credentials = try await client.credentials()
            let fields = "client_id=\(credentials.clientId)&client_secret=\(credentials.clientSecret)&grant_type=client_credentials"
            try expectDCRError(try await client.send(.post, "/o/client/token", headers: Client.dcrHeaders, body: fields), "invalid_request")
            headers[.contentType] = "application/json"
            try expectDCRError(try await client.send(.post, "/o/client/token", headers: headers, body: fields), "invalid_request")
        }
        try await Harness { $0.lenient = true }.run { client in
            let body = #"{"software_statement":"\#(Client.softwareStatement)"}"#
            let registered = try await client.send(.post, "/o/client/register", headers: Client.dcrHeaders, body: body)
            #expect(registered.status == .created)
            let json = try registered.json()
            let fields =
                "client_id=\(json["client_id"] as? String ?? "")&client_secret=\(json["client_secret"] as? String ?? "")&grant_type=client_credentials"
            #expect(try await client.send(.post, "/o/client/token", headers: Client.dcrHeaders, body: fields).status == .created)
        }
    }

    @Test func sessionsNeedAFormAndDecisionsJSON() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials)
            let asJSON = headers.merging([.contentType: "application/json"])
            try expectEnhancedError(
                try await client.send(.post, "/api/v2/REF30/sessions", headers: asJSON, body: Client.allSessionFields),
                status: .unsupportedMediaType,
                code: "unsupported_media_type"
            )
            let code = try await client.newCode(credentials, fields: "")
            try expectEnhancedError(
                try await client.send(.post, "/api/v2/REF30/sessions/\(code)", headers: headers, body: "mvpd=DTV"),
                status: .unsupportedMediaType,
                code: "unsupported_media_type"
            )
            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/decisions/authorize/Cablevision", headers: headers, fields: "resources=REF30"),
                status: .unsupportedMediaType,
                code: "unsupported_media_type"
            )
        }
        try await Harness { $0.lenient = true }.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials)
            #expect(try await client.send(.post, "/api/v2/REF30/sessions", headers: headers, body: Client.allSessionFields).status == .ok)
            // Read as JSON whatever it is declared as (here the profile is missing, which is the next check).
            try expectEnhancedError(
                try await client.send(.post, "/api/v2/REF30/decisions/authorize/Cablevision", headers: headers, body: #"{"resources":["REF30"]}"#),
                status: .forbidden,
                code: "authenticated_profile_missing",
                action: "authentication"
            )
        }
    }

    // MARK: X-Device-Info

    @Test("X-Device-Info is required on DCR calls", arguments: [nil, "%%% not base64 %%%"] as [String?])
    func dcrNeedsDeviceInfo(deviceInfo: String?) async throws {
        let headers: HTTPFields = deviceInfo.map { [Client.name("X-Device-Info"): $0] } ?? [:]
        try await Harness().run { client in
            try expectDCRError(try await client.register(headers: headers), "invalid_request")
            let credentials = try await client.credentials()
            let fields = "client_id=\(credentials.clientId)&client_secret=\(credentials.clientSecret)&grant_type=client_credentials"
            try expectDCRError(try await client.token(fields, headers: headers), "invalid_request")
        }
    }

    @Test func lenientDCRDoesWithoutDeviceInfo() async throws {
        try await Harness { $0.lenient = true }.run { client in
            let registration = try await client.register(headers: [:])
            #expect(registration.status == .created)
            let json = try registration.json()
            let fields =
                "client_id=\(json["client_id"] as? String ?? "")&client_secret=\(json["client_secret"] as? String ?? "")&grant_type=client_credentials"
            #expect(try await client.token(fields, headers: [:]).status == .created)
        }
    }

    @Test func v2CallsNeedDeviceInfoWhereAdobeRequiresIt() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let bare = Client.authorized(credentials, deviceInfo: nil)
            for reply in [
                try await client.form(.post, "/api/v2/REF30/sessions", headers: bare, fields: Client.allSessionFields),
                try await client.send(.get, "/api/v2/REF30/profiles", headers: bare),
                try await client.send(.get, "/api/v2/REF30/profiles/Cablevision", headers: bare),
                try await client.jsonPost("/api/v2/REF30/decisions/authorize/Cablevision", #"{"resources":["REF30"]}"#, headers: bare),
                try await client.send(.get, "/api/v2/REF30/logout/Cablevision", headers: bare),
            ] {
                try expectEnhancedError(reply, status: .badRequest, code: "invalid_header_device_info")
            }
            // Not where Adobe does not list it: the code poll and the configuration.
            let code = try await client.newCode(credentials)
            #expect(try await client.send(.get, "/api/v2/REF30/profiles/code/\(code)", headers: bare).status == .ok)
            #expect(try await client.send(.get, "/api/v2/REF30/configuration", headers: bare).status == .ok)
        }
        try await Harness { $0.lenient = true }.run { client in
            let credentials = try await client.credentials()
            let bare = Client.authorized(credentials, deviceInfo: nil)
            #expect(try await client.form(.post, "/api/v2/REF30/sessions", headers: bare, fields: Client.allSessionFields).status == .ok)
            #expect(try await client.send(.get, "/api/v2/REF30/profiles", headers: bare).status == .ok)
        }
    }

    // MARK: Second-screen pages

    @Test func aUsedCodeIsReportedAsUsedNeverAsSuccess() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            for page in [
                try await client.send(.get, "/api/v2/authenticate/REF30/\(code)"),
                try await client.send(.get, "/_sim/mvpd/login?code=\(code)&sp=REF30&mvpd=Cablevision"),
                try await client.form(.post, "/_sim/mvpd/login", fields: "code=\(code)&sp=REF30&mvpd=Cablevision&username=eve"),
                try await client.form(.post, "/activate", fields: "code=\(code)"),
            ] {
                #expect(page.status == .badRequest)
                #expect(page.text.contains("already used"), "\(page.text)")
                #expect(!page.text.contains("Success"))
            }
            // The v1 browser entry point too.
            let v1Code = try await client.newRegcode(Client.bearer(credentials))
            #expect(try await client.approve(#"{"code":"\#(v1Code)"}"#).status == .ok)
            let v1Page = try await client.send(.get, "/api/v1/authenticate?reg_code=\(v1Code)&requestor_id=REF30")
            #expect(v1Page.text.contains("already used"))
            #expect(!v1Page.text.contains("Success"))
        }
    }

    @Test func aDeniedCodeIsReportedAsDenied() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            #expect(try await client.send(.put, "/_sim/codes/\(code)/script", body: #"{"outcome":"deny"}"#).status == .ok)
            for page in [
                try await client.send(.get, "/api/v2/authenticate/REF30/\(code)"),
                try await client.send(.get, "/_sim/mvpd/login?code=\(code)&sp=REF30&mvpd=Cablevision"),
                try await client.form(.post, "/_sim/mvpd/login", fields: "code=\(code)&sp=REF30&mvpd=Cablevision&username=eve"),
                try await client.form(.post, "/activate", fields: "code=\(code)"),
            ] {
                #expect(page.status == .badRequest)
                #expect(page.text.contains("denied"), "\(page.text)")
                #expect(!page.text.contains("Success"))
            }
        }
    }
}
