import Foundation
import Hummingbird
import PassSimulator
import Testing

/// `POST sessions` needs `mvpd`, `domainName` and `redirectUrl`: Adobe's "Create authentication session" samples are
/// replayed, and each parameter is refused as Adobe does when it is invalid.
@Suite("REST v2 session parameters")
struct SessionParameterTests {
    /// The headers of the samples of Adobe's "Create authentication session" page, with the client's own token.
    static func sampleHeaders(_ credentials: Credentials) -> HTTPFields {
        [
            .authorization: "Bearer \(credentials.accessToken)",
            .contentType: "application/x-www-form-urlencoded",
            Client.name("AP-Device-Identifier"): "fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi",
            Client.name("X-Device-Info"):
                "ewoJInByaW1hcnlIYXJkd2FyZVR5cGUiOiAiU2V0VG9wQm94IiwKCSJtb2RlbCI6ICJUViA1dGggR2VuIiwKCSJtYW51ZmFjdHVyZXIiOiAiQXBwbGUiLAoJIm9zTmFtZSI6ICJ0dk9TIgoJIm9zVmVuZG9yIjogIkFwcGxlIiwKCSJvc1ZlcnNpb24iOiAiMTEuMCIKfQ==",
            .accept: "application/json",
            .userAgent: "Mozilla/5.0 (Apple TV; U; CPU AppleTV5,3 OS 11.0 like Mac OS X; en_US)",
        ]
    }

    static let sampleBody = "mvpd=Cablevision&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"

    static func create(_ client: Client, _ credentials: Credentials, body: String) async throws -> Reply {
        try await client.send(.post, "/api/v2/REF30/sessions", headers: Self.sampleHeaders(credentials), body: body)
    }

    @Test func sample1WithEveryParameterAsksToAuthenticate() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await Self.create(client, credentials, body: Self.sampleBody)
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(
                Set(body.keys) == [
                    "actionName", "actionType", "reasonType", "url", "code", "sessionId", "mvpd", "serviceProvider", "notBefore", "notAfter",
                ]
            )
            let code = try #require(body["code"] as? String)
            #expect(body["actionName"] as? String == "authenticate")
            #expect(body["actionType"] as? String == "interactive")
            #expect(body["url"] as? String == "/api/v2/authenticate/REF30/\(code)")
        }
    }

    @Test func sample2WithoutParametersAsksToResume() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await Self.create(client, credentials, body: "")
            #expect(reply.status == .ok, "\(reply.text)")
            let body = try reply.json()
            #expect(
                Set(body.keys) == [
                    "actionName", "actionType", "reasonType", "url", "missingParameters", "code", "sessionId", "serviceProvider", "notBefore",
                    "notAfter",
                ]
            )
            let code = try #require(body["code"] as? String)
            #expect(body["actionName"] as? String == "resume")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
            #expect(body["missingParameters"] as? [String] == ["mvpd", "domain", "redirectUrl"])
        }
    }

    @Test func sample3WithAValidProfileAsksToAuthorize() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let first = try await Self.create(client, credentials, body: Self.sampleBody).json()
            let code = try #require(first["code"] as? String)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            let body = try await Self.create(client, credentials, body: Self.sampleBody).json()
            #expect(Set(body.keys) == ["actionName", "actionType", "reasonType", "url", "sessionId", "mvpd", "serviceProvider"])
            #expect(body["actionName"] as? String == "authorize")
            #expect(body["reasonType"] as? String == "authenticated")
            #expect(body["url"] as? String == "/api/v2/REF30/decisions/authorize/Cablevision")
        }
    }

    @Test(
        "a session missing some parameters is resumed, not authenticated",
        arguments: [
            ("mvpd=Cablevision", ["domain", "redirectUrl"]),
            ("mvpd=Cablevision&domainName=adobe.com", ["redirectUrl"]),
            ("mvpd=Cablevision&redirectUrl=https%3A%2F%2Fadobe.com", ["domain"]),
            ("domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com", ["mvpd"]),
        ]
    )
    func partialSessionsAskToResume(fields: String, missing: [String]) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let body = try await Self.create(client, credentials, body: fields).json()
            let code = try #require(body["code"] as? String)
            #expect(body["actionName"] as? String == "resume")
            #expect(body["missingParameters"] as? [String] == missing)
            #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
            // The user agent URL is not one until the session is complete (without an MVPD it shows the picker, which
            // resumes the session).
            let early = try await client.send(.get, "/api/v2/authenticate/REF30/\(code)")
            #expect(early.status == (missing.contains("mvpd") ? .ok : .badRequest), "\(early.text)")

            // A resume that still lacks something says retry; one that completes it says authenticate.
            let resume = { (form: String) in
                try await client.form(
                    .post,
                    "/api/v2/REF30/sessions/\(code)",
                    headers: [.authorization: "Bearer \(credentials.accessToken)"],
                    fields: form
                )
            }
            if missing.count > 1 {
                #expect(try await resume("").json()["actionName"] as? String == "retry")
            }
            let completed = try await resume(Self.sampleBody).json()
            #expect(completed["actionName"] as? String == "authenticate")
            #expect(completed["missingParameters"] == nil)
            #expect(try await client.send(.get, "/api/v2/authenticate/REF30/\(code)").status == .found)
        }
    }

    @Test func theActivationPageResumesWithItsOwnDomainAndRedirect() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try #require(try await Self.create(client, credentials, body: "").json()["code"] as? String)
            let submitted = try await client.form(.post, "/activate", fields: "code=\(code)&mvpd=Cablevision")
            #expect(submitted.status == .seeOther)
            #expect(try await client.send(.get, "/api/v2/authenticate/REF30/\(code)").status == .found)
            let status = try await client.send(.get, "/api/v2/REF30/sessions/\(code)", headers: [.authorization: "Bearer \(credentials.accessToken)"])
            let existing = try #require(try status.json()["existingParameters"] as? [String: String])
            #expect(existing["domain"] == "adobe.com")
            #expect(existing["redirectUrl"] == "https://adobe.com")
        }
    }

    @Test(
        "domainName must be one the requestor lists",
        arguments: [
            ("adobe.com", true), ("www.adobe.com", true), ("ADOBE.com", true), ("notadobe.com", false), ("adobe.com.evil.example", false),
            ("example.com", false),
        ]
    )
    func domainNameIsChecked(domain: String, accepted: Bool) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await Self.create(client, credentials, body: "mvpd=Cablevision&domainName=\(domain)&redirectUrl=https%3A%2F%2Fadobe.com")
            if accepted {
                #expect(reply.status == .ok, "\(reply.text)")
            } else {
                try expectEnhancedError(reply, status: .badRequest, code: "invalid_parameter_domain_name")
            }
        }
    }

    @Test func aRequestorsOwnDomainsReplaceTheDefaultAndResumesAreCheckedToo() async throws {
        try await Harness { $0.requestorDomains["REF30"] = ["lab.example"] }.run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await Self.create(client, credentials, body: Self.sampleBody),
                status: .badRequest,
                code: "invalid_parameter_domain_name"
            )
            let body = try await Self.create(client, credentials, body: "mvpd=Cablevision").json()
            let code = try #require(body["code"] as? String)
            let resumed = try await client.form(
                .post,
                "/api/v2/REF30/sessions/\(code)",
                headers: [.authorization: "Bearer \(credentials.accessToken)"],
                fields: "domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            try expectEnhancedError(resumed, status: .badRequest, code: "invalid_parameter_domain_name")
            // The configuration endpoint publishes the requestor's own list.
            let configuration = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            let requestor = try #require(try configuration.json()["requestor"] as? [String: Any])
            #expect((requestor["domains"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["lab.example"])
        }
        try await Harness { $0.lenient = true }.run { client in
            let credentials = try await client.credentials()
            let reply = try await Self.create(
                client,
                credentials,
                body: "mvpd=Cablevision&domainName=example.com&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            #expect(reply.status == .ok)
        }
    }

    @Test(
        "redirectUrl must be an absolute URL",
        arguments: [
            ("https%3A%2F%2Fadobe.com", true), ("adobepass%3A%2F%2Fdone", true), ("adobe.com", false), ("%2Fdone", false), ("https%3A", false),
        ]
    )
    func redirectUrlIsChecked(redirect: String, accepted: Bool) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await Self.create(client, credentials, body: "mvpd=Cablevision&domainName=adobe.com&redirectUrl=\(redirect)")
            if accepted {
                #expect(reply.status == .ok, "\(reply.text)")
            } else {
                try expectEnhancedError(reply, status: .badRequest, code: "invalid_parameter_redirect_url")
            }
        }
    }
}
