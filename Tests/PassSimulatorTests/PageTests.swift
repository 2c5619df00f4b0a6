import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("Second-screen pages")
struct PageTests {
    /// The `name="value"` attributes of hidden inputs in a form, for replaying it.
    static func hiddenFields(_ html: String) -> [String: String] {
        var fields: [String: String] = [:]
        for chunk in html.components(separatedBy: "<input type=\"hidden\" ").dropFirst() {
            let parts = chunk.components(separatedBy: "\"")
            if parts.count > 3, parts[0] == "name=", parts[2] == " value=" {
                fields[parts[1]] = parts[3]
            }
        }
        return fields
    }

    static func query(_ location: String) -> [String: String] {
        let components = URLComponents(string: location)
        var result: [String: String] = [:]
        for item in components?.queryItems ?? [] { result[item.name] = item.value }
        return result
    }

    @Test func authenticateRedirectsToTheLoginPageWhoseFormCompletesTheCode() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let created = try await client.createSession(
                credentials,
                fields: "mvpd=Spectrum&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
            ).json()
            let code = try #require(created["code"] as? String)
            let url = try #require(created["url"] as? String)

            let redirect = try await client.send(.get, url)
            #expect(redirect.status == .found)
            let location = try #require(redirect.headers[.location])
            #expect(location.hasPrefix("/_sim/mvpd/login?"))
            #expect(Self.query(location) == ["code": code, "sp": "REF30", "mvpd": "Spectrum"])

            let login = try await client.send(.get, location)
            #expect(login.status == .ok)
            #expect(login.contentType.hasPrefix("text/html"))
            #expect(login.text.contains("<form method=\"post\" action=\"/_sim/mvpd/login\">"))
            #expect(login.text.contains("name=\"password\""))
            let hidden = Self.hiddenFields(login.text)
            #expect(hidden == ["code": code, "sp": "REF30", "mvpd": "Spectrum"])
            #expect((try await client.poll(credentials, code: code)).text == #"{"profiles":{}}"#)

            let submitted = try await client.form(
                .post,
                "/_sim/mvpd/login",
                fields: "code=\(code)&sp=REF30&mvpd=Spectrum&username=bob%40example.com&password=anything"
            )
            #expect(submitted.status == .ok)
            #expect(submitted.text.contains("Success! Return to your TV"))

            let profiles = try #require(try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])
            let profile = try #require(profiles["Spectrum"] as? [String: Any])
            let attributes = try #require(profile["attributes"] as? [String: [String: Any]])
            #expect(attributes["userID"]?["value"] as? String == "bob@example.com")

            // Back on the authenticate URL, the completed code is reported as used, never as a success.
            let again = try await client.send(.get, url)
            #expect(again.status == .badRequest)
            #expect(again.text.contains("Code already used"))
            #expect(!again.text.contains("Success"))
        }
    }

    @Test func authenticateWithoutMVPDShowsAPicker() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "")
            let picker = try await client.send(.get, "/api/v2/authenticate/REF30/\(code)")
            #expect(picker.status == .ok)
            #expect(picker.contentType.hasPrefix("text/html"))
            #expect(picker.text.contains("action=\"/_sim/mvpd/login\""))
            for mvpd in SimulatedMVPD.defaults {
                #expect(picker.text.contains("value=\"\(mvpd.id)\""), "\(mvpd.id)")
                #expect(picker.text.contains(mvpd.displayName), "\(mvpd.displayName)")
            }
            #expect(Self.hiddenFields(picker.text) == ["code": code, "sp": "REF30"])

            // The picker submits with GET; the chosen MVPD is used when the login completes.
            let login = try await client.send(.get, "/_sim/mvpd/login?code=\(code)&sp=REF30&mvpd=DTV")
            #expect(login.status == .ok)
            let done = try await client.form(.post, "/_sim/mvpd/login", fields: "code=\(code)&sp=REF30&mvpd=DTV&username=u")
            #expect(done.status == .ok)
            let profiles = try #require(try await client.poll(credentials, code: code).json()["profiles"] as? [String: Any])
            #expect(Array(profiles.keys) == ["DTV"])
        }
    }

    @Test func authenticateRejectsUnknownAndExpiredCodesAsHTML() async throws {
        let harness = Harness()
        try await harness.run { client in
            let unknown = try await client.send(.get, "/api/v2/authenticate/REF30/ZZZZZZZ")
            #expect(unknown.status == .badRequest)
            #expect(unknown.contentType.hasPrefix("text/html"))

            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            harness.clock.advance(by: .seconds(1800))
            let expired = try await client.send(.get, "/api/v2/authenticate/REF30/\(code)")
            #expect(expired.status == .badRequest)
            #expect(expired.contentType.hasPrefix("text/html"))
            #expect(expired.text.contains("expired"))

            let login = try await client.form(.post, "/_sim/mvpd/login", fields: "code=\(code)&sp=REF30&mvpd=DTV&username=u")
            #expect(login.status == .badRequest)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .gone)
        }
    }

    @Test func activationPageLeadsToTheProviderLogin() async throws {
        try await Harness().run { client in
            let page = try await client.send(.get, "/activate?code=abc1234")
            #expect(page.status == .ok)
            #expect(page.contentType.hasPrefix("text/html"))
            #expect(page.text.contains("<form method=\"post\" action=\"/activate\">"))
            #expect(page.text.contains("value=\"abc1234\""))
            #expect(page.text.contains("<style>"))
            #expect(!page.text.contains("<link") && !page.text.contains("<script src"))

            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "")
            let submitted = try await client.form(.post, "/activate", fields: "code=\(code.lowercased())&mvpd=Comcast_SSO")
            #expect(submitted.status == .seeOther)
            #expect(submitted.headers[.location] == "/api/v2/authenticate/REF30/\(code)")

            let redirect = try await client.send(.get, "/api/v2/authenticate/REF30/\(code)")
            #expect(redirect.status == .found)
            #expect(Self.query(try #require(redirect.headers[.location]))["mvpd"] == "Comcast_SSO")

            let unknown = try await client.form(.post, "/activate", fields: "code=QQQQQQQ&mvpd=")
            #expect(unknown.status == .badRequest)
            #expect(unknown.text.contains("was not found"))
        }
    }

    @Test func generatedLogoIsServed() async throws {
        try await Harness().run { client in
            let logo = try await client.send(.get, "/_sim/logos/DTV.svg")
            #expect(logo.status == .ok)
            #expect(logo.contentType == "image/svg+xml")
            #expect(logo.text.hasPrefix("<svg"))
            #expect(try await client.send(.get, "/_sim/logos/Nope.svg").status == .notFound)
        }
    }
}
