import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import PassSimulator

@Suite("Admin API, routing and embedding")
struct AdminAndRoutingTests {
    @Test func approveUnknownCodeIs404() async throws {
        try await Harness().run { client in
            let reply = try await client.approve(#"{"code":"X7K2Q9P"}"#)
            #expect(reply.status == .notFound)
            #expect(reply.contentType.hasPrefix("application/json"))
            #expect(try reply.json()["error"] as? String == "unknown_code")
        }
    }

    @Test func approveValidatesItsInput() async throws {
        try await Harness().run { client in
            #expect(try await client.approve("{}").status == .badRequest)
            #expect(try await client.approve("not json").status == .badRequest)
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "")
            let unknownMVPD = try await client.approve(#"{"code":"\#(code)","mvpd":"Nope"}"#)
            #expect(unknownMVPD.status == .badRequest)
            #expect(try unknownMVPD.json()["error"] as? String == "unknown_mvpd")

            let first = try await client.approve(#"{"code":"\#(code)","mvpd":"DTV","userId":"carol"}"#)
            #expect(first.status == .ok)
            let body = try first.json()
            #expect(body["serviceProvider"] as? String == "REF30")
            #expect(body["mvpd"] as? String == "DTV")
            #expect(body["notBefore"] is Int64 || body["notBefore"] is Int)
            // Approving again is idempotent; with another MVPD it conflicts.
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
            #expect(try await client.approve(#"{"code":"\#(code)","mvpd":"Spectrum"}"#).status == .conflict)
        }
    }

    @Test func codesListsLiveCodes() async throws {
        let harness = Harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let first = try await client.newCode(credentials, device: "a")
            harness.clock.advance(by: .seconds(1))
            let second = try await client.newCode(credentials, device: "b")
            #expect(try await client.approve(#"{"code":"\#(second)"}"#).status == .ok)

            let listed = try #require(try await client.send(.get, "/_sim/codes").json()["codes"] as? [[String: Any]])
            #expect(listed.map { $0["code"] as? String } == [first, second])
            #expect(listed.map { $0["status"] as? String } == ["pending", "completed"])
            #expect(listed.first?["deviceIdentifier"] as? String == Data("a".utf8).base64EncodedString())

            let expire = try await client.jsonPost("/_sim/expire", #"{"code":"\#(first)"}"#)
            #expect(expire.status == .ok)
            try expectEnhancedError(try await client.poll(credentials, code: first), status: .badRequest, code: "invalid_authentication_session")
            let remaining = try #require(try await client.send(.get, "/_sim/codes").json()["codes"] as? [[String: Any]])
            #expect(remaining.map { $0["code"] as? String } == [second])
            #expect(try await client.jsonPost("/_sim/expire", #"{"code":"NOPE000"}"#).status == .notFound)
        }
    }

    @Test func unknownRoutesAre404AndWrongMethodsAre405() async throws {
        try await Harness().run { client in
            #expect(try await client.send(.get, "/nothing/here").status == .notFound)
            #expect(try await client.send(.get, "/api/v2/REF30/unknown").status == .notFound)

            let wrong = try await client.send(.get, "/o/client/register")
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers[.allow] == "POST")
            #expect(try await client.send(.delete, "/api/v2/REF30/sessions").status == .methodNotAllowed)
            let session = try await client.send(.put, "/api/v2/REF30/sessions/ABCDEFG")
            #expect(session.status == .methodNotAllowed)
            #expect(session.headers[.allow] == "GET, HEAD, POST")
            #expect(try await client.send(.post, "/api/v2/REF30/profiles/code/ABCDEFG").status == .methodNotAllowed)
            #expect(try await client.send(.get, "/_sim/approve").status == .methodNotAllowed)
            #expect(try await client.send(.delete, "/activate").status == .methodNotAllowed)
        }
    }

    @Test func withRunningServerServesOverTCPAndStops() async throws {
        let simulator = PassSimulator(configuration: Client.configuration())
        let baseURL = try await simulator.withRunningServer { baseURL in
            #expect(baseURL.hasPrefix("http://127.0.0.1:"))
            let port = try #require(Int(baseURL.dropFirst("http://127.0.0.1:".count)))
            #expect(port > 0)
            try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                let body = #"{"software_statement":"\#(Client.softwareStatement)"}"#
                let response = try await client.post(
                    "/o/client/register",
                    headers: [.contentType: "application/json", Client.name("X-Device-Info"): Client.deviceInfo],
                    body: ByteBuffer(string: body)
                )
                #expect(response.status == .created)
                let page = try await client.get("/activate")
                #expect(page.status == .ok)
            }
            return baseURL
        }
        // Once the body returns the listener is closed.
        let port = try #require(Int(baseURL.dropFirst("http://127.0.0.1:".count)))
        await #expect(throws: (any Error).self) {
            try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                _ = try await client.get("/activate")
            }
        }
    }

    @Test func withRunningServerPropagatesTheBodysError() async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await PassSimulator().withRunningServer { _ -> Int in throw Boom() }
        }
    }
}

@Suite("Parsing helpers")
struct ParsingTests {
    @Test func formDecoding() {
        #expect(FormData.parse("a=1&b=x%20y+z&c=&d&a=2") == ["a": "1", "b": "x y z", "c": "", "d": ""])
        #expect(FormData.parse("redirectUrl=https%3A%2F%2Fadobe.com%2Fx%3Fy%3D1") == ["redirectUrl": "https://adobe.com/x?y=1"])
        #expect(FormData.decodeComponent("100%") == "100%")
        #expect(FormData.decodeComponent(FormData.encodeComponent("a b&c=d/é")) == "a b&c=d/é")
    }

    @Test func base64IsLenient() {
        #expect(Base64.decodeLenient("ZGV2aWNl") == Data("device".utf8))
        #expect(Base64.decodeLenient("YQ") == Data("a".utf8))
        #expect(Base64.decodeLenient("-_8") == Data([0xFB, 0xFF]))
        #expect(Base64.decodeLenient("***") == nil)
        #expect(Base64.decodeLenient("") == nil)
    }

    @Test func deviceInfoToleratesAdobesInvalidSample() throws {
        let bytes = Array(
            #"{"primaryHardwareType": "SetTopBox","model": "TV 5th Gen","osName": "tvOS" "osVendor": "Apple","displayWidth": 1920,"nested": {"x": "y"}}"#
                .utf8
        )
        let fields = DeviceInfo.scalarPairs(in: bytes)
        #expect(fields["primaryHardwareType"] == "SetTopBox")
        #expect(fields["model"] == "TV 5th Gen")
        #expect(fields["osName"] == "tvOS")
        #expect(fields["osVendor"] == "Apple")
        #expect(fields["displayWidth"] == "1920")
        #expect(fields["nested"] == nil)
        #expect(fields["x"] == "y")
        // URL-encoded Base64 (as v1 clients send it) is accepted.
        let encoded = Data(#"{"model":"AppleTV"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "%3D")
        #expect(DeviceInfo(headerValue: encoded)?["model"] == "AppleTV")
    }

    @Test func softwareStatementChecks() {
        #expect(SoftwareStatement.softwareId(of: Client.softwareStatement) == "4NRB1-0XZABZI9E6-5SM3R")
        let unsigned =
            String(Client.softwareStatement.prefix { $0 != "." }) + "." + Client.jwt(payload: #"{"software_id":"s"}"#).split(separator: ".")[1] + "."
        #expect(SoftwareStatement.softwareId(of: unsigned) == "s")
        #expect(SoftwareStatement.softwareId(of: "a.b.c.d") == nil)
    }
}
