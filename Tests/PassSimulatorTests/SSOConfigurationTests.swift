import Foundation
import Hummingbird
import PassSimulator
import Testing

@Suite("SSO: MVPD platform fields and integration settings")
struct SSOConfigurationTests {
    @Test func v2ConfigurationPublishesThePlatformFields() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let reply = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            let requestor = try #require(try reply.json()["requestor"] as? [String: Any])
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]])
            #expect(mvpds.map { $0["id"] as? String } == ["Cablevision", "Comcast_SSO", "DTV", "Spectrum", "Verizon"])
            let byId = Dictionary(uniqueKeysWithValues: mvpds.map { ($0["id"] as! String, $0) })
            #expect(byId["Comcast_SSO"]?["platformMappingId"] as? String == "Comcast")
            #expect(byId["Comcast_SSO"]?["boardingStatus"] as? String == "SUPPORTED")
            #expect(byId["Comcast_SSO"]?["enablePlatformServices"] as? Bool == true)
            #expect(byId["Comcast_SSO"]?["displayInPlatformPicker"] as? Bool == true)
            #expect(byId["Comcast_SSO"]?["enforcePlatformPermissions"] as? Bool == true)
            #expect(byId["Spectrum"]?["boardingStatus"] as? String == "PICKER")
            #expect(byId["Spectrum"]?["platformMappingId"] as? String == "Spectrum")
            #expect(byId["Cablevision"]?["platformMappingId"] == nil)
            #expect(byId["Cablevision"]?["boardingStatus"] == nil)
            #expect(byId["Cablevision"]?["enablePlatformServices"] as? Bool == false)
        }
    }

    @Test func v1ConfigPublishesThePlatformFields() async throws {
        try await Harness().run { client in
            let reply = try await client.send(.get, "/api/v1/config/REF30?format=json", headers: Client.bearer(try await client.credentials()))
            #expect(reply.status == .ok, "\(reply.text)")
            let requestor = try #require(try reply.json()["requestor"] as? [String: Any])
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]], "\(reply.text)")
            let comcast = try #require(mvpds.first { $0["id"] as? String == "Comcast_SSO" })
            #expect(comcast["boardingStatus"] as? String == "SUPPORTED")
            #expect(comcast["requiredMetadataFields"] as? [String] == [])
        }
    }

    @Test func adminReplacesPlatformFieldsAndIntegrationSettings() async throws {
        try await Harness().run { client in
            let credentials = try await client.credentials()
            let put = try await client.send(
                .put,
                "/_sim/mvpds/DTV",
                headers: [.contentType: "application/json"],
                body: #"{"platformMappingId":"DirecTV","boardingStatus":"SUPPORTED","enablePlatformServices":true,"requiredMetadataFields":["uid"]}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            let configuration = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
            let mvpds = try #require((try configuration.json()["requestor"] as? [String: Any])?["mvpds"] as? [[String: Any]])
            let dtv = try #require(mvpds.first { $0["id"] as? String == "DTV" })
            #expect(dtv["platformMappingId"] as? String == "DirecTV")
            #expect(dtv["requiredMetadataFields"] as? [String] == ["uid"])
            // The partner flow now runs for DTV, asking for the required fields.
            let session = try await client.partnerSession(
                credentials,
                pfs: Client.pfs(provider: "DirecTV"),
                fields: "mvpd=DTV&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com"
            )
            #expect((try session.json()["authenticationRequest"] as? [String: Any])?["attributesNames"] as? [String] == ["uid"], "\(session.text)")

            #expect(try await client.send(.put, "/_sim/mvpds/Nope", headers: [.contentType: "application/json"], body: "{}").status == .notFound)
            let bad = try await client.send(
                .put,
                "/_sim/mvpds/DTV",
                headers: [.contentType: "application/json"],
                body: #"{"boardingStatus":"MAYBE"}"#
            )
            #expect(bad.status == .badRequest)

            // A disabled integration is answered like a missing one.
            let disable = try await client.send(
                .put,
                "/_sim/integrations/REF30/Verizon",
                headers: [.contentType: "application/json"],
                body: #"{"enabled":false}"#
            )
            #expect(disable.status == .ok, "\(disable.text)")
            #expect(try disable.json()["enabled"] as? Bool == false)
            #expect((try disable.json()["sso"] as? [String: Bool])?["appleTvos"] == true)
            try expectEnhancedError(
                try await client.createSession(credentials, fields: "mvpd=Verizon"),
                status: .badRequest,
                code: "invalid_integration"
            )
            let read = try await client.send(.get, "/_sim/integrations/REF30/Verizon")
            #expect(try read.json()["serviceProvider"] as? String == "REF30")
            #expect(
                try await client.send(.put, "/_sim/integrations/REF30/Verizon", headers: [.contentType: "application/json"], body: #"{"ttl":0}"#)
                    .status == .badRequest
            )
        }
    }

    @Test func theConfigurationFileSectionsDecodeAndApply() throws {
        let json = """
            {"mvpds": [{"id": "Comcast_SSO", "displayName": "Xfinity", "platformMappingId": "Comcast", "boardingStatus": "SUPPORTED",
                        "enablePlatformServices": true},
                       {"id": "Other", "displayName": "Other"}],
             "integrations": [{"serviceProvider": "REF30", "mvpd": "Comcast_SSO", "degraded": true, "sso": {"appleTvos": false}, "ttl": 60}],
             "identityIssuers": {"lab": {"kind": "platform", "alg": "HS256", "key": "secret"}}}
            """
        let file = try JSONDecoder().decode(SSOConfigurationFile.self, from: Data(json.utf8))
        var configuration = SimulatorConfiguration()
        try file.apply(to: &configuration)
        #expect(configuration.mvpds.map(\.id) == ["Comcast_SSO", "Other"])
        #expect(configuration.mvpds[0].boardingStatus == .supported)
        #expect(configuration.mvpds[0].enforcePlatformPermissions)
        #expect(configuration.mvpds[1].platformMappingId == nil)
        let settings = try #require(configuration.integrationSettings["REF30"]?["Comcast_SSO"])
        #expect(settings.degraded && !settings.sso.appleTvos && settings.sso.appleIos && settings.ttl == 60)
        #expect(configuration.identityIssuers["lab"]?.alg == .hs256)

        let badIssuer = try JSONDecoder().decode(
            SSOConfigurationFile.self,
            from: Data(#"{"identityIssuers": {"svc": {"kind": "serviceToken", "alg": "HS256", "key": "k"}}}"#.utf8)
        )
        #expect(throws: SSOConfigurationError.self) { try badIssuer.apply(to: &configuration) }
    }
}
