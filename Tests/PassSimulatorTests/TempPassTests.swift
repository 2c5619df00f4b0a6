import Foundation
import Hummingbird
import PassSimulator
import Testing

/// TempPass and promotional TempPass (Adobe's REST v2 temporary access flows), replaying the documented samples.
@Suite("TempPass")
struct TempPassTests {
    static let identity = "eyJlbWFpbCI6ImZvb0BiYXIuY29tIn0="  // {"email":"foo@bar.com"}, Adobe's sample

    static func harness() -> Harness {
        Harness {
            $0.serviceProviders = ["REF30", "apasstest1"]
            EntitlementSettings(
                tempPass: [
                    "TempPass_TEST40": TempPassSettings(ttl: 3600, displayName: "Adobe Temp Pass Test"),
                    "flexibleTempPass": TempPassSettings(ttl: 3600, maxResources: 2),
                ]
            ).apply(to: &$0)
        }
    }

    static func decide(
        _ client: Client,
        _ credentials: Credentials,
        _ kind: String = "authorize",
        mvpd: String = "TempPass_TEST40",
        device: String = "device-1",
        identity: String? = nil,
        resources: String = #"["REF30"]"#
    ) async throws -> [[String: Any]] {
        var headers = Client.authorized(credentials, device: device)
        if let identity { headers[Client.name("AP-TempPass-Identity")] = identity }
        let reply = try await client.jsonPost("/api/v2/apasstest1/decisions/\(kind)/\(mvpd)", #"{"resources":\#(resources)}"#, headers: headers)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(try reply.json()["decisions"] as? [[String: Any]])
    }

    static func profile(
        _ client: Client,
        _ credentials: Credentials,
        mvpd: String,
        device: String = "device-1",
        identity: String? = nil
    ) async throws -> Reply {
        var headers = Client.authorized(credentials, device: device)
        if let identity { headers[Client.name("AP-TempPass-Identity")] = identity }
        return try await client.send(.get, "/api/v2/apasstest1/profiles/\(mvpd)", headers: headers)
    }

    @Test func configurationFlagsTempPassMVPDs() async throws {
        try await Self.harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            let mvpds = try #require((try reply.json()["requestor"] as? [String: Any])?["mvpds"] as? [[String: Any]])
            let flags = Dictionary(uniqueKeysWithValues: mvpds.map { ($0["id"] as? String ?? "", $0["isTempPass"] as? Bool) })
            #expect(flags["TempPass_TEST40"] == true)
            #expect(flags["flexibleTempPass"] == true)
            #expect(flags["Cablevision"] == false)
            #expect(mvpds.first { $0["id"] as? String == "TempPass_TEST40" }?["displayName"] as? String == "Adobe Temp Pass Test")

            let v1 = try await client.send(.get, "/api/v1/config/REF30.json", headers: Client.bearer(credentials))
            #expect(v1.status == .ok, "\(v1.text)")
            let v1MVPDs = try #require(
                ((try v1.json()["requestor"] as? [String: Any])?["mvpds"] as? [String: Any])?["mvpd"] as? [[String: Any]]
                    ?? (try v1.json()["requestor"] as? [String: Any])?["mvpds"] as? [[String: Any]],
                "\(v1.text)"
            )
            #expect(v1MVPDs.first { $0["id"] as? String == "TempPass_TEST40" }?["tempPass"] as? Bool == true)
            #expect(v1MVPDs.first { $0["id"] as? String == "Cablevision" }?["tempPass"] == nil)
        }
    }

    @Test func basicTempPassSessionProfileAndDecisions() async throws {
        let harness = Self.harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            let start = harness.clock.epochMillisecondsNow
            // Sessions: no login; the device's trial starts (Adobe's sample 4 of "Create authentication session").
            let session = try await client.createSession(
                credentials,
                sp: "apasstest1",
                fields: "mvpd=TempPass_TEST40&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            #expect(session.status == .ok)
            try expectDocumentedShape(
                try session.json(),
                #"""
                {"actionName": "authorize", "actionType": "direct", "reasonType": "temporary",
                 "url": "/api/v2/apasstest1/decisions/authorize/TempPass_TEST40", "sessionId": "1b614390-6610-4d14-9421-6565f6e75958",
                 "mvpd": "TempPass_TEST40", "serviceProvider": "apasstest1"}
                """#
            )
            // Profile (sample 4 of "Retrieve profile for specific mvpd"): temporary, issuer Adobe, the TTL.
            harness.clock.advance(by: .seconds(60))
            let profileReply = try await Self.profile(client, credentials, mvpd: "TempPass_TEST40")
            let profiles = try #require(try profileReply.json()["profiles"] as? [String: Any])
            try expectDocumentedShape(
                profiles,
                #"""
                {"TempPass_TEST40": {"notBefore": 1697718650206, "notAfter": 1697718710206, "issuer": "Adobe", "type": "temporary",
                  "attributes": {"expiration_date": {"value": 1697718710206, "state": "plain"},
                                 "userID": {"value": "temppass_0bdf451aa9c8fa60e80f6b99ab48310c73b480f1", "state": "plain"}}}}
                """#,
                allowingExtra: ["sessionId"]
            )
            let profile = try #require(profiles["TempPass_TEST40"] as? [String: Any])
            #expect(profile["notBefore"] as? Int64 == start)
            #expect(profile["notAfter"] as? Int64 == start + 3_600_000)
            let attributes = try #require(profile["attributes"] as? [String: [String: Any]])
            #expect(attributes["expiration_date"]?["value"] as? Int64 == start + 3_600_000)
            #expect((attributes["userID"]?["value"] as? String)?.hasPrefix("temppass_") == true)
            // The device's other profiles list it too.
            let all = try await client.send(.get, "/api/v2/apasstest1/profiles", headers: Client.authorized(credentials))
            #expect((try all.json()["profiles"] as? [String: Any])?["TempPass_TEST40"] != nil)

            // Decisions (sample 4 of "Retrieve authorization decisions"): permit with a media token until the TTL.
            let permitted = try await Self.decide(client, credentials)
            try expectDocumentedShape(
                ["decisions": permitted],
                #"""
                {"decisions": [{"resource": "REF30", "serviceProvider": "apasstest1", "mvpd": "TempPass_TEST40", "source": "temppass",
                  "authorized": true, "token": {"notBefore": 1697094207324, "notAfter": 1697094802367, "serializedToken": "PHNp"},
                  "notBefore": 1697094207324, "notAfter": 1697594802367}]}
                """#
            )
            // The trial is per device: another device has its own.
            harness.clock.advance(by: .seconds(3600))
            let spent = try await Self.decide(client, credentials, resources: #"["REF30","apasstest1"]"#)
            let documentedDenial = #"""
                {"resource": "REF30", "serviceProvider": "apasstest1", "mvpd": "TempPass_TEST40", "source": "temppass", "authorized": false,
                 "error": {"status": 403, "code": "temporary_access_duration_limit_exceeded",
                           "message": "The temporary access duration limit has been exceeded.",
                           "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                           "action": "authentication"}}
                """#
            try expectDocumentedShape(spent[0], documentedDenial)
            #expect(spent.map { $0["authorized"] as? Bool } == [false, false])
            #expect((spent[1]["error"] as? [String: Any])?["code"] as? String == "temporary_access_duration_limit_exceeded")
            try expectEnhancedError(
                try await Self.profile(client, credentials, mvpd: "TempPass_TEST40"),
                status: .forbidden,
                code: "temporary_access_duration_limit_exceeded",
                action: "authentication"
            )
            #expect(try await Self.decide(client, credentials, device: "device-2").first?["authorized"] as? Bool == true)

            // A session resumed with the TempPass MVPD needs no login either.
            let pending = try await client.createSession(
                credentials,
                sp: "apasstest1",
                device: "device-3",
                fields: "domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            let code = try #require(try pending.json()["code"] as? String, "\(pending.text)")
            let resumed = try await client.form(
                .post,
                "/api/v2/apasstest1/sessions/\(code)",
                headers: Client.authorized(credentials, device: "device-3"),
                fields: "mvpd=TempPass_TEST40"
            )
            #expect(try resumed.json()["reasonType"] as? String == "temporary", "\(resumed.text)")
        }
    }

    @Test func resetTempPassAtAdobesPath() async throws {
        let harness = Self.harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            _ = try await Self.decide(client, credentials)
            _ = try await Self.decide(client, credentials, device: "device-2")
            harness.clock.advance(by: .seconds(3600))
            #expect(try await Self.decide(client, credentials).first?["authorized"] as? Bool == false)

            // Adobe's sample names the device by its decoded identifier.
            let bearer: HTTPFields = [.authorization: "Bearer \(credentials.accessToken)"]
            #expect(
                try await client.send(.delete, "/reset-tempass/v3/reset?requestor_id=apasstest1&mvpd_id=TempPass_TEST40&device_id=device-1").status
                    == .unauthorized
            )
            #expect(
                try await client.send(
                    .delete,
                    "/reset-tempass/v3/reset?requestor_id=apasstest1&mvpd_id=Cablevision&device_id=device-1",
                    headers: bearer
                ).status
                    == .badRequest
            )
            let reset = try await client.send(
                .delete,
                "/reset-tempass/v3/reset?requestor_id=apasstest1&mvpd_id=TempPass_TEST40&device_id=device-1",
                headers: bearer
            )
            #expect(reset.status == .noContent)
            #expect(try await Self.decide(client, credentials).first?["authorized"] as? Bool == true)
            #expect(try await Self.decide(client, credentials, device: "device-2").first?["authorized"] as? Bool == false)

            // `all` resets every device; so does the admin route.
            let all = try await client.send(
                .delete,
                "/reset-tempass/v3/reset?requestor_id=apasstest1&mvpd_id=TempPass_TEST40&device_id=all",
                headers: bearer
            )
            #expect(all.status == .noContent)
            #expect(try await Self.decide(client, credentials, device: "device-2").first?["authorized"] as? Bool == true)
            #expect(try await Self.decide(client, credentials).first?["authorized"] as? Bool == true)
            let trials = try await client.send(.get, "/_sim/temppass")
            #expect((try trials.json()["trials"] as? [[String: Any]])?.count == 2)
            let admin = try await client.send(.delete, "/_sim/temppass?serviceProvider=apasstest1&mvpd=TempPass_TEST40")
            #expect(try admin.json()["reset"] as? Int == 2)
        }
    }

    @Test func promotionalTempPassCountsResourcesPerIdentity() async throws {
        let harness = Self.harness()
        try await harness.run { client in
            let credentials = try await client.credentials()
            // Without (or with an unreadable) identity: the documented item-level 400.
            for identity in [nil, "not base64!"] {
                let missing = try await Self.decide(client, credentials, mvpd: "flexibleTempPass", identity: identity)
                try expectDocumentedShape(
                    missing[0],
                    #"""
                    {"resource": "REF30", "serviceProvider": "apasstest1", "mvpd": "flexibleTempPass", "source": "temppass", "authorized": false,
                     "error": {"status": 400, "code": "invalid_header_identity_for_temporary_access",
                               "message": "The identity for temporary access header value is missing or invalid.",
                               "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                               "action": "none"}}
                    """#
                )
            }
            try expectEnhancedError(
                try await Self.profile(client, credentials, mvpd: "flexibleTempPass"),
                status: .badRequest,
                code: "invalid_header_identity_for_temporary_access"
            )

            // Preauthorization uses no resource.
            let preauthorized = try await Self.decide(
                client,
                credentials,
                "preauthorize",
                mvpd: "flexibleTempPass",
                identity: Self.identity,
                resources: #"["res01","res02","res03"]"#
            )
            #expect(preauthorized.map { $0["authorized"] as? Bool } == [true, true, true])
            #expect(preauthorized.allSatisfy { $0["token"] == nil && $0["source"] as? String == "temppass" })

            let first = try await Self.decide(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity, resources: #"["res01"]"#)
            try expectDocumentedShape(
                first[0],
                #"""
                {"resource": "res01", "serviceProvider": "apasstest1", "mvpd": "flexibleTempPass", "source": "temppass", "authorized": true,
                 "token": {"notBefore": 1697543318183, "notAfter": 1697543918183, "serializedToken": "PHNp"},
                 "notBefore": 1697543318183, "notAfter": 1697843918183}
                """#
            )
            let profile = try await Self.profile(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity)
            try expectDocumentedShape(
                try profile.json(),
                #"""
                {"profiles": {"flexibleTempPass": {"notBefore": 1697720528524, "notAfter": 1697720588524, "issuer": "Adobe", "type": "temporary",
                  "attributes": {"remaining_resources": {"value": 1, "state": "plain"}, "used_assets": {"value": ["res01"], "state": "plain"},
                                 "expiration_date": {"value": 1697720528524, "state": "plain"},
                                 "userID": {"value": "temppass_0bdf451aa9c8fa60e80f6b99ab48310c73b480f1", "state": "plain"}}}}}
                """#,
                allowingExtra: ["sessionId"]
            )
            #expect(
                ((try profile.json()["profiles"] as? [String: [String: Any]])?["flexibleTempPass"]?["attributes"] as? [String: [String: Any]])?[
                    "remaining_resources"
                ]?["value"] as? Int == 1
            )

            // The same identity on a new device continues the trial (Adobe's identification table).
            let more = try await Self.decide(
                client,
                credentials,
                mvpd: "flexibleTempPass",
                device: "device-2",
                identity: Self.identity,
                resources: #"["res02","res03","res01"]"#
            )
            #expect(more.map { $0["authorized"] as? Bool } == [true, false, true])
            try expectDocumentedShape(
                more[1],
                #"""
                {"resource": "res03", "serviceProvider": "apasstest1", "mvpd": "flexibleTempPass", "source": "temppass", "authorized": false,
                 "error": {"status": 403, "code": "temporary_access_resources_limit_exceeded",
                           "message": "The temporary access resources limit has been exceeded.",
                           "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                           "action": "authentication"}}
                """#
            )
            try expectEnhancedError(
                try await Self.profile(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity),
                status: .forbidden,
                code: "temporary_access_resources_limit_exceeded",
                action: "authentication"
            )

            // A reset by identity key (a string the identity carries) starts over.
            let bearer: HTTPFields = [.authorization: "Bearer \(credentials.accessToken)"]
            let reset = try await client.send(
                .delete,
                "/reset-tempass/v3/reset/generic?requestor_id=apasstest1&mvpd_id=flexibleTempPass&key=foo%40bar.com",
                headers: bearer
            )
            #expect(reset.status == .noContent)
            let fresh = try await Self.decide(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity, resources: #"["res03"]"#)
            #expect(fresh.first?["authorized"] as? Bool == true)

            // Past the TTL: duration exceeded, with the profile's documented `action: none`.
            harness.clock.advance(by: .seconds(3600))
            #expect(
                (try await Self.decide(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity).first?["error"] as? [String: Any])?[
                    "code"
                ] as? String == "temporary_access_duration_limit_exceeded"
            )
            try expectEnhancedError(
                try await Self.profile(client, credentials, mvpd: "flexibleTempPass", identity: Self.identity),
                status: .forbidden,
                code: "temporary_access_duration_limit_exceeded"
            )
        }
    }

    @Test func settingsAreValidatedAndReplaceable() async throws {
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(EntitlementSettings.self, from: Data(#"{"tempPass":{"X":{"ttl":60,"promotional":true}}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(EntitlementSettings.self, from: Data(#"{"tempPass":{"X":{"ttl":0}}}"#.utf8))
        }
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let unknown = try await client.send(.put, "/_sim/entitlements", body: #"{"tempPass":{"Nowhere":{"ttl":60}}}"#)
            #expect(unknown.status == .badRequest)
            #expect(try await client.send(.put, "/_sim/entitlements", body: #"{"tempPass":{"DTV":{"ttl":60}}}"#).status == .ok)
            let read = try await client.send(.get, "/_sim/entitlements")
            #expect(((try read.json()["tempPass"] as? [String: Any])?["DTV"] as? [String: Any])?["ttl"] as? Int == 60)
            let decisions = try await client.jsonPost(
                "/api/v2/REF30/decisions/authorize/DTV",
                #"{"resources":["REF30"]}"#,
                headers: Client.authorized(credentials)
            )
            #expect((try decisions.json()["decisions"] as? [[String: Any]])?.first?["source"] as? String == "temppass")
        }
    }
}
