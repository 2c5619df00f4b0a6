import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("REST v2 sessions")
struct SessionTests {
    static func isCode(_ code: String) -> Bool {
        code.count == 7 && code.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    @Test func createWithAllParametersAsksToAuthenticate() async throws {
        let harness = Harness()
        let now = harness.clock.epochMillisecondsNow
        try await harness.run { client in
            let credentials = try await client.credentials()
            let reply = try await client.createSession(credentials)
            #expect(reply.status == .ok)
            #expect(reply.contentType.hasPrefix("application/json"))
            let body = try reply.json()
            let code = try #require(body["code"] as? String)
            #expect(Self.isCode(code), "code \(code)")
            #expect(body["actionName"] as? String == "authenticate")
            #expect(body["actionType"] as? String == "interactive")
            #expect(body["reasonType"] as? String == "none")
            #expect(body["url"] as? String == "/api/v2/authenticate/REF30/\(code)")
            #expect(body["mvpd"] as? String == "Cablevision")
            #expect(body["serviceProvider"] as? String == "REF30")
            #expect((body["sessionId"] as? String)?.isEmpty == false)
            #expect(body["missingParameters"] == nil)
            // The window is sent as strings of epoch milliseconds, not numbers.
            let notBefore = try #require(body["notBefore"] as? String)
            let notAfter = try #require(body["notAfter"] as? String)
            #expect(Int64(notBefore) == now)
            #expect(Int64(notAfter) == now + 1_800_000)
        }
    }

    @Test func createWithoutMVPDAsksToResume() async throws {
        try await Harness { $0.codeTTL = .seconds(600) }.run { client in
            let credentials = try await client.credentials()
            let reply = try await client.createSession(credentials, fields: "")
            #expect(reply.status == .ok)
            let body = try reply.json()
            let code = try #require(body["code"] as? String)
            #expect(Self.isCode(code))
            #expect(body["actionName"] as? String == "resume")
            #expect(body["actionType"] as? String == "direct")
            #expect(body["reasonType"] as? String == "none")
            #expect(body["url"] as? String == "/api/v2/REF30/sessions/\(code)")
            #expect(body["missingParameters"] as? [String] == ["mvpd", "domain", "redirectUrl"])
            let notBeforeText = try #require(body["notBefore"] as? String)
            let notAfterText = try #require(body["notAfter"] as? String)
            let notBefore = try #require(Int64(notBeforeText))
            let notAfter = try #require(Int64(notAfterText))
            #expect(notAfter - notBefore == 600_000)
        }
    }

    @Test func codesAreDistinct() async throws {
        try await Harness { $0.throttleEnabled = false }.run { client in
            let credentials = try await client.credentials()
            var codes: Set<String> = []
            for index in 0..<50 {
                codes.insert(try await client.newCode(credentials, device: "device-\(index)"))
            }
            #expect(codes.count == 50)
        }
    }

    @Test(
        "header problems are reported with the exact enhanced error code",
        arguments: [
            (nil as String?, Client.deviceInfo as String?, "invalid_header_device_identifier"),
            ("ZGV2aWNl", Client.deviceInfo, "invalid_header_device_identifier"),
            ("fingerprint", Client.deviceInfo, "invalid_header_device_identifier"),
            ("fingerprint ***not base64***", Client.deviceInfo, "invalid_header_device_identifier"),
            ("serial ZGV2aWNl", Client.deviceInfo, "invalid_header_device_identifier"),
            ("fingerprint ZGV2aWNl", nil, "invalid_header_device_info"),
            ("fingerprint ZGV2aWNl", "%%% not base64 %%%", "invalid_header_device_info"),
            ("fingerprint ZGV2aWNl", "", "invalid_header_device_info"),
        ]
    )
    func headerErrors(deviceIdentifier: String?, deviceInfo: String?, code: String) async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            var headers: HTTPFields = [.authorization: "Bearer \(credentials.accessToken)"]
            if let deviceIdentifier { headers[Client.name("AP-Device-Identifier")] = deviceIdentifier }
            if let deviceInfo { headers[Client.name("X-Device-Info")] = deviceInfo }
            let reply = try await client.form(.post, "/api/v2/REF30/sessions", headers: headers, fields: Client.allSessionFields)
            try expectEnhancedError(reply, status: .badRequest, code: code)
        }
    }

    @Test func deviceInfoIsDecodedLeniently() async throws {
        // Adobe's own documentation sample: valid Base64 of invalid JSON (missing comma).
        let sample = Data(
            #"{"primaryHardwareType": "SetTopBox","model": "TV 5th Gen","manufacturer": "Apple","osName": "tvOS" "osVendor": "Apple","osVersion": "11.0"}"#
                .utf8
        )
        .base64EncodedString()
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.form(
                .post,
                "/api/v2/REF30/sessions",
                headers: Client.authorized(credentials, deviceInfo: sample),
                fields: Client.allSessionFields
            )
            #expect(reply.status == .ok)
            let code = try #require(try reply.json()["code"] as? String)
            let status = try await client.send(
                .get,
                "/api/v2/REF30/sessions/\(code)",
                headers: Client.authorized(credentials, device: nil, deviceInfo: nil)
            )
            let device = try #require(try status.json()["device"] as? [String: Any])
            #expect(device["type"] as? String == "SetTopBox")
            #expect(device["model"] as? String == "TV 5th Gen")
            let os = try #require(device["operatingSystem"] as? [String: Any])
            #expect(os["name"] as? String == "tvOS")
            #expect(os["vendor"] as? String == "Apple")
            #expect((os["version"] as? [String: Any])?["major"] as? Int == 11)
        }
    }

    @Test func unknownMVPDIsRejected() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.createSession(credentials, fields: "mvpd=NoSuchProvider")
            try expectEnhancedError(reply, status: .badRequest, code: "invalid_parameter_mvpd")
        }
    }

    @Test func serviceProviderOutsideAllowListIsRejected() async throws {
        try await Harness { $0.serviceProviders = ["REF30"] }.run { client in
            let credentials = try await client.credentials()
            try expectEnhancedError(
                try await client.createSession(credentials, sp: "OTHER"),
                status: .badRequest,
                code: "invalid_parameter_service_provider"
            )
            #expect(try await client.createSession(credentials, sp: "REF30").status == .ok)
        }
    }

    @Test func malformedServiceProviderIsRejected() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.send(.get, "/api/v2/bad%20sp/configuration", headers: Client.authorized(credentials))
            try expectEnhancedError(reply, status: .badRequest, code: "invalid_parameter_service_provider")
        }
    }

    @Test func getSessionReportsParametersAndWindow() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let created = try await client.createSession(credentials, fields: "domainName=adobe.com").json()
            let code = try #require(created["code"] as? String)
            // Codes are matched case-insensitively.
            let reply = try await client.send(
                .get,
                "/api/v2/REF30/sessions/\(code.lowercased())",
                headers: Client.authorized(credentials, device: nil, deviceInfo: nil)
            )
            #expect(reply.status == .ok)
            let body = try reply.json()
            #expect(body["existingParameters"] as? [String: String] == ["serviceProvider": "REF30", "domain": "adobe.com"])
            #expect(body["missingParameters"] as? [String] == ["mvpd", "redirectUrl"])
            #expect(body["notBefore"] as? String == created["notBefore"] as? String)
            #expect(body["notAfter"] as? String == created["notAfter"] as? String)
            #expect((body["device"] as? [String: Any])?["model"] as? String == "AppleTV")
        }
    }

    @Test func resumeSuppliesTheMVPD() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials, fields: "")
            let headers = Client.authorized(credentials, device: nil, deviceInfo: nil)

            let retry = try await client.form(.post, "/api/v2/REF30/sessions/\(code)", headers: headers, fields: "domainName=adobe.com")
            #expect(retry.status == .ok)
            let retryBody = try retry.json()
            #expect(retryBody["actionName"] as? String == "retry")
            #expect(retryBody["actionType"] as? String == "direct")
            #expect(retryBody["missingParameters"] as? [String] == ["mvpd", "redirectUrl"])

            let resumed = try await client.form(
                .post,
                "/api/v2/REF30/sessions/\(code)",
                headers: headers,
                fields: "mvpd=Spectrum&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            #expect(resumed.status == .ok)
            let body = try resumed.json()
            #expect(body["actionName"] as? String == "authenticate")
            #expect(body["actionType"] as? String == "interactive")
            #expect(body["mvpd"] as? String == "Spectrum")
            #expect(body["code"] as? String == code)
            #expect(body["url"] as? String == "/api/v2/authenticate/REF30/\(code)")
            #expect(body["notBefore"] is String && body["notAfter"] is String)

            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/sessions/\(code)", headers: headers, fields: "mvpd=Nope"),
                status: .badRequest,
                code: "invalid_parameter_mvpd"
            )
        }
    }

    @Test func unknownAndExpiredCodesOnSessionEndpoints() async throws {
        let harness = Harness { $0.serviceProviders = ["REF30", "OTHER"] }
        try await harness.run { client in
            let credentials = try await client.credentials()
            let headers = Client.authorized(credentials, device: nil, deviceInfo: nil)
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/sessions/ZZZZZZZ", headers: headers),
                status: .badRequest,
                code: "invalid_parameter_code"
            )
            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/sessions/ZZZZZZZ", headers: headers, fields: "mvpd=DTV"),
                status: .badRequest,
                code: "invalid_parameter_code"
            )
            let code = try await client.newCode(credentials)
            // A code is scoped to its service provider.
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/OTHER/sessions/\(code)", headers: headers),
                status: .badRequest,
                code: "invalid_parameter_code"
            )

            harness.clock.advance(by: .seconds(1800))
            try expectEnhancedError(
                try await client.send(.get, "/api/v2/REF30/sessions/\(code)", headers: headers),
                status: .badRequest,
                code: "invalid_authentication_session"
            )
            try expectEnhancedError(
                try await client.form(.post, "/api/v2/REF30/sessions/\(code)", headers: headers, fields: "mvpd=DTV"),
                status: .badRequest,
                code: "invalid_authentication_session"
            )
        }
    }

    @Test func newCodeInvalidatesThePreviousCodeOfTheSameDevice() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let first = try await client.newCode(credentials, device: "tv-a")
            let other = try await client.newCode(credentials, device: "tv-b")
            let second = try await client.newCode(credentials, device: "tv-a")
            #expect(first != second)

            try expectEnhancedError(try await client.poll(credentials, code: first), status: .badRequest, code: "invalid_authentication_session")
            #expect(try await client.poll(credentials, code: second).text == #"{"profiles":{}}"#)
            #expect(try await client.poll(credentials, code: other).text == #"{"profiles":{}}"#)
            // The replaced code can no longer be approved either.
            #expect(try await client.approve(#"{"code":"\#(first)"}"#).status == .gone)
        }
    }

    @Test func authenticatedDeviceIsToldToAuthorize() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let code = try await client.newCode(credentials)
            #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)

            let reply = try await client.createSession(credentials)
            #expect(reply.status == .ok)
            let body = try reply.json()
            #expect(body["actionName"] as? String == "authorize")
            #expect(body["reasonType"] as? String == "authenticated")
            #expect(body["url"] as? String == "/api/v2/REF30/decisions/authorize/Cablevision")
            #expect(body["code"] == nil)

            // Another MVPD still needs a code.
            #expect(
                try await client.createSession(credentials, fields: "mvpd=DTV&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com").json()[
                    "actionName"
                ]
                    as? String == "authenticate"
            )

            // After logout the device needs a code again.
            let logout = try await client.send(
                .get,
                "/api/v2/REF30/logout/Cablevision?redirectUrl=https%3A%2F%2Fadobe.com",
                headers: Client.authorized(credentials)
            )
            #expect(logout.status == .ok)
            let logouts = try #require(try logout.json()["logouts"] as? [String: [String: String]])
            // A profile was dropped, so the user agent is sent to the MVPD's logout page (reference §7.8).
            #expect(logouts["Cablevision"]?["actionName"] == "logout")
            #expect(logouts["Cablevision"]?["actionType"] == "interactive")
            #expect(
                try await client.send(.get, "/api/v2/REF30/profiles/Cablevision", headers: Client.authorized(credentials)).text == #"{"profiles":{}}"#
            )
            let again = try await client.createSession(credentials).json()
            #expect(again["actionName"] as? String == "authenticate")
            #expect(again["code"] is String)
        }
    }
}
