import Foundation
import Hummingbird
import PassSimulator
import Testing

/// Injected 4xx and 5xx answers: an edge's HTML page by default, Adobe's enhanced error with a chosen
/// `action` when `errorAction` is set.
@Suite("Fault injection: error bodies and actions")
struct FaultErrorBodyTests {
    @Test func enhancedServerErrorCarriesTheChosenAction() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await FaultTests.putFaults(client, #"{"sessions":{"error5xx":1,"error5xxStatuses":[500],"errorAction":"none"}}"#)
            let reply = try await client.createSession(credentials)
            try expectEnhancedError(reply, status: .internalServerError, code: "internal_server_error", action: "none")
            #expect(reply.headers[.retryAfter] == nil)
            // Not processed: no code was issued.
            #expect((try await client.send(.get, "/_sim/codes").json()["codes"] as? [Any])?.isEmpty == true)
            let stats = try await FaultTests.stats(client)
            #expect(FaultTests.faultCount(stats, "error5xx") == 1)
        }
    }

    @Test func retryAfterActionSendsRetryAfterAndAChosenCode() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            try await FaultTests.putFaults(
                client,
                #"{"config":{"error5xx":1,"error5xxStatuses":[503],"errorAction":"retry-after","retryAfterSeconds":9,"errorCode":"maximum_attempts_exceeded"}}"#
            )
            let reply = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            try expectEnhancedError(reply, status: .serviceUnavailable, code: "maximum_attempts_exceeded", action: "retry-after")
            #expect(reply.headers[.retryAfter] == "9")
        }
    }

    @Test func clientErrorIsAnEdgeHTMLPageByDefault() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            try await FaultTests.putFaults(client, #"{"poll":{"error4xx":1}}"#)
            let reply = try await client.poll(credentials, code: code)
            #expect(reply.status == .forbidden)
            #expect(reply.contentType == "text/html")
            #expect(reply.text.contains("<title>403 Forbidden</title>"))
            let stats = try await FaultTests.stats(client)
            #expect(FaultTests.faultCount(stats, "error4xx") == 1)
            #expect((stats["requests"] as? [String: [String: Int]])?["poll"]?["403"] == 1)
        }
    }

    @Test func clientErrorWithAnActionIsAnEnhancedError() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            try await FaultTests.putFaults(client, #"{"poll":{"error4xx":1,"error4xxStatuses":[400],"errorAction":"configuration"}}"#)
            let reply = try await client.poll(credentials, code: code)
            try expectEnhancedError(reply, status: .badRequest, code: "too_many_resources", action: "configuration")
        }
    }

    @Test func errorBodySettingsAreValidated() async throws {
        try await Harness().run { client in
            for invalid in [
                #"{"default":{"error4xxStatuses":[429]}}"#,
                #"{"default":{"error4xxStatuses":[401]}}"#,
                #"{"default":{"error4xxStatuses":[500]}}"#,
                #"{"default":{"error4xxStatuses":[]}}"#,
                #"{"default":{"errorAction":""}}"#,
                #"{"default":{"errorAction":"two words"}}"#,
                #"{"default":{"errorCode":" "}}"#,
                #"{"default":{"error4xx":0.6,"error5xx":0.6}}"#,
            ] {
                let reply = try await client.send(.put, "/_sim/faults", body: invalid)
                #expect(reply.status == .badRequest, "\(invalid)")
            }
            let valid = #"{"default":{"error4xx":0.5,"error4xxStatuses":[403,404],"errorAction":"authentication","errorCode":"x_y"}}"#
            #expect(try await client.send(.put, "/_sim/faults", body: valid).status == .ok)
            let read = try await client.send(.get, "/_sim/faults").json()
            let defaults = try #require(read["default"] as? [String: Any])
            #expect(defaults["errorAction"] as? String == "authentication")
            #expect(defaults["error4xxStatuses"] as? [Int] == [403, 404])
        }
    }
}
