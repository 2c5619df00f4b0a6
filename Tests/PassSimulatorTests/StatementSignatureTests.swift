import Foundation
import Hummingbird
import PassSimulator
import Testing

/// Software statements must be signed with the simulator's key, and `redirect_uri` must be one the statement lists;
/// Adobe's documented registration request is replayed against both rules.
@Suite("DCR software statement signature")
struct StatementSignatureTests {
    /// The request sample of Adobe's "Retrieve client credentials" page (DCR APIs), with the statement's line breaks
    /// joined: an RS256 statement signed with Adobe's key, for `software_id` 4NRB1-0XZABZI9E6-5SM3R.
    enum AdobeSample {
        static let statement =
            "eyJhbGciOiJSUzI1NiJ9."
            + "eyJzb2Z0d2FyZV9pZCI6IjROUkIxLTBYWkFCWkk5RTYtNVNNM1IiLCJjbGllbnRfbmFtZSI6IkV4YW1wbGUgU3RhdGVtZW50LWJhc2VkIENsaWVudCIsImNsaWVudF91cmkiOiJodHRwczovL2NsaWVudC5leGFtcGxlLm5ldC8ifQ."
            + "GHfL4QNIrQwL18BSRdE595T9jbzqa06R9BT8w409x9oIcKaZo_mt15riEXHazdISUvDIZhtiyNrSHQ8K4TvqWxH6uJgcmoodZdPwmWRIEYbQDLqPNxREtYn0"
            + "5X3AR7ia4FRjQ2ojZjk5fJqJdQ-JcfxyhK-P8BAWBd6I2LLA77IG32xtbhxYfHX7VhuU5ProJO8uvu3Ayv4XRhLZJY4yKfmyjiiKiPNe-Ia4SMy_d_QSWxsk"
            + "U5XIQl5Sa2YRPMbDRXttm2TfnZM1xx70DoYi8g6czz-CPGRi4SW_S2RKHIJfIjoI3zTJ0Y2oe0_EJAiXbL6OyF9S5tKxDXV8JIndSA"
        static let softwareId = "4NRB1-0XZABZI9E6-5SM3R"
        static let redirectURI = "adobepass://com.programmer"
        static let headers: HTTPFields = [
            Client.name("X-Device-Info"):
                "ewoJInByaW1hcnlIYXJkd2FyZVR5cGUiOiAiU2V0VG9wQm94IiwKCSJtb2RlbCI6ICJUViA1dGggR2VuIiwKCSJtYW51ZmFjdHVyZXIiOiAiQXBwbGUiLAoJIm9zTmFtZSI6ICJ0dk9TIgoJIm9zVmVuZG9yIjogIkFwcGxlIiwKCSJvc1ZlcnNpb24iOiAiMTEuMCIKfQ==",
            .accept: "application/json",
            .userAgent: "Mozilla/5.0 (Apple TV; U; CPU AppleTV5,3 OS 11.0 like Mac OS X; en_US)",
        ]

        static func body(statement: String, redirectURI: String? = Self.redirectURI) -> String {
            guard let redirectURI else { return #"{"software_statement": "\#(statement)"}"# }
            return #"{"software_statement": "\#(statement)", "redirect_uri": "\#(redirectURI)"}"#
        }
    }

    static func register(_ client: Client, statement: String, redirectURI: String? = AdobeSample.redirectURI) async throws -> Reply {
        try await client.jsonPost(
            "/o/client/register",
            AdobeSample.body(statement: statement, redirectURI: redirectURI),
            headers: AdobeSample.headers
        )
    }

    @Test func adobesSampleRequestIsRefusedBecauseAdobeSignedItsStatement() async throws {
        try await Harness().run { client in
            try expectDCRError(try await Self.register(client, statement: AdobeSample.statement), "invalid_software_statement")
        }
    }

    @Test func adobesSampleRequestWithAStatementTheSimulatorIssuedRegisters() async throws {
        let statement = try Client.statementKey.issue(softwareId: AdobeSample.softwareId, redirectURIs: [AdobeSample.redirectURI])
        try await Harness().run { client in
            let reply = try await Self.register(client, statement: statement)
            #expect(reply.status == .created, "\(reply.text)")
            let body = try reply.json()
            // The keys of Adobe's success sample.
            #expect(Set(body.keys) == ["client_id", "client_secret", "redirect_uris", "grant_types", "scopes", "client_id_issued_at"])
            #expect(body["redirect_uris"] as? [String] == [AdobeSample.redirectURI])
        }
    }

    @Test func acceptingUnsignedStatementsTakesAdobesSampleAsBefore() async throws {
        try await Harness { $0.acceptUnsignedStatements = true }.run { client in
            #expect(try await Self.register(client, statement: AdobeSample.statement).status == .created)
            // Structure and approval still count.
            try expectDCRError(try await Self.register(client, statement: "not-a-jwt"), "invalid_software_statement")
            let unknown = Client.jwt(payload: #"{"software_id":"nobody-approved-this"}"#)
            try expectDCRError(try await Self.register(client, statement: unknown), "unapproved_software_statement")
        }
    }

    @Test(
        "statements the simulator did not sign are refused",
        arguments: [
            "unsigned (alg none)", "signed with another key", "payload swapped", "signature of another statement", "HS256 header",
        ]
    )
    func foreignStatementsAreRefused(kind: String) async throws {
        let key = Client.statementKey
        let genuine = try key.issue(softwareId: AdobeSample.softwareId, redirectURIs: [AdobeSample.redirectURI])
        let other = try key.issue(softwareId: "another-app", redirectURIs: [AdobeSample.redirectURI])
        let parts = genuine.split(separator: ".").map(String.init)
        let otherParts = other.split(separator: ".").map(String.init)
        let statement: String
        switch kind {
        case "unsigned (alg none)":
            statement = Client.jwt(payload: #"{"software_id":"4NRB1-0XZABZI9E6-5SM3R","redirect_uris":["adobepass://com.programmer"]}"#)
        case "signed with another key":
            statement = try SoftwareStatementKey.ephemeral().issue(softwareId: AdobeSample.softwareId, redirectURIs: [AdobeSample.redirectURI])
        case "payload swapped":
            statement = [parts[0], otherParts[1], parts[2]].joined(separator: ".")
        case "signature of another statement":
            statement = [parts[0], parts[1], otherParts[2]].joined(separator: ".")
        default:
            let header = Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            statement = [header, parts[1], parts[2]].joined(separator: ".")
        }
        try await Harness().run { client in
            try expectDCRError(try await Self.register(client, statement: statement), "invalid_software_statement")
        }
    }

    @Test func redirectURIMustBeOneTheStatementLists() async throws {
        let statement = try Client.statementKey.issue(softwareId: "lab-app", redirectURIs: ["adobepass://lab.app", "https://lab.example/done"])
        let noURIs = try Client.statementKey.issue(softwareId: "lab-app")
        try await Harness().run { client in
            try expectDCRError(try await Self.register(client, statement: statement, redirectURI: "adobepass://other.app"), "invalid_redirect_uri")
            try expectDCRError(try await Self.register(client, statement: noURIs, redirectURI: "adobepass://lab.app"), "invalid_redirect_uri")
            #expect(try await Self.register(client, statement: statement, redirectURI: "https://lab.example/done").status == .created)
            // redirect_uri is optional.
            #expect(try await Self.register(client, statement: noURIs, redirectURI: nil).status == .created)
        }
    }

    @Test func aSignedStatementNeedsNoApprovalButANarrowedOneCoversOnlyItsRequestors() async throws {
        let statement = try Client.statementKey.issue(softwareId: "narrowed-app", redirectURIs: ["adobepass://com.example"])
        try await Harness {
            $0.serviceProviders = ["REF30", "OTHER"]
            $0.approvedSoftwareStatements["narrowed-app"] = ["OTHER"]
        }.run { client in
            let credentials = try await client.credentials(statement: statement)
            try expectEnhancedError(
                try await client.createSession(credentials),
                status: .unauthorized,
                code: "invalid_access_token_service_provider",
                action: "application-registration"
            )
            #expect(try await client.createSession(credentials, sp: "OTHER").status == .ok)
        }
    }

    @Test func theAdminRouteIssuesStatementsThatRegister() async throws {
        try await Harness().run { client in
            let issued = try await client.jsonPost("/_sim/statements", #"{"software_id":"lab-app","redirect_uris":["adobepass://com.example"]}"#)
            #expect(issued.status == .created, "\(issued.text)")
            let statement = try #require(try issued.json()["software_statement"] as? String)
            #expect(try await client.register(statement: statement).status == .created)
            #expect(try await client.jsonPost("/_sim/statements", #"{"redirect_uris":[]}"#).status == .badRequest)
            #expect(try await client.jsonPost("/_sim/statements", #"{"software_id":""}"#).status == .badRequest)
        }
    }

    @Test func theKeyFileIsCreatedOnceWithMode0600AndKeptFromRunToRun() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statement-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = SoftwareStatementKey.path(besideState: directory.appendingPathComponent("sim.sqlite").path)
        #expect(path == directory.appendingPathComponent("sim.statement-key.pem").path)

        let (first, created) = try SoftwareStatementKey.loadOrCreate(path: path)
        #expect(created)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let statement = try first.issue(softwareId: "lab-app")

        // A later run reads the same key: what the first issued still registers.
        let (second, createdAgain) = try SoftwareStatementKey.loadOrCreate(path: path)
        #expect(!createdAgain)
        try await Harness { $0.statementKey = second }.run { client in
            let reply = try await Self.register(client, statement: statement, redirectURI: nil)
            #expect(reply.status == .created, "\(reply.text)")
        }
        try await Harness().run { client in
            try expectDCRError(try await Self.register(client, statement: statement, redirectURI: nil), "invalid_software_statement")
        }

        try "not a key".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: SoftwareStatementKeyError.self) { try SoftwareStatementKey.loadOrCreate(path: path) }
    }
}

extension Client {
    /// Registers with `statement` (for the `redirect_uri` ``register(statement:headers:)`` sends) and obtains a token.
    func credentials(statement: String) async throws -> Credentials {
        let registration = try await self.register(statement: statement)
        #expect(registration.status == .created, "\(registration.text)")
        let body = try registration.json()
        let clientId = try #require(body["client_id"] as? String)
        let clientSecret = try #require(body["client_secret"] as? String)
        let token = try await self.token("client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials")
        let accessToken = try #require(try token.json()["access_token"] as? String)
        return Credentials(clientId: clientId, clientSecret: clientSecret, accessToken: accessToken)
    }
}
