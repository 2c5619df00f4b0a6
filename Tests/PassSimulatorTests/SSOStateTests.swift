import Foundation
import Hummingbird
import PassSimulator
import RegcodeTestSupport
import Synchronization
import Testing

@Suite("SSO: state file")
struct SSOStateTests {
    @Test func ssoStateSurvivesARestart() async throws {
        try await StateFileTests.withStatePath { path in
            let clock = ManualClock()
            struct Saved: Sendable {
                var appA: Credentials
                var appB: Credentials
                var platformToken: String
                var serviceToken: String
                var saml: String
            }
            let saved = Mutex<Saved?>(nil)
            try await StateFileTests.harness(path, clock: clock).run { client in
                let appA = try await client.credentials()
                let appB = try await client.credentials()
                let platformToken = try await client.platformToken(sub: "roku-user")
                let serviceToken = try await client.serviceToken(sub: "jane")
                try await client.basicLogin(appA, headers: Client.platformHeader(platformToken).merging(Client.serviceHeader(serviceToken)))
                // An appleSSO profile, and an open partner request answered before the restart.
                let first = try await client.partnerSAML(appA, device: "apple-tv")
                #expect(try await client.partnerProfile(appA, saml: first, device: "apple-tv").status == .created)
                let pending = try await client.partnerSAML(appB, device: "apple-tv")
                // Runtime settings.
                let put = try await client.send(
                    .put,
                    "/_sim/mvpds/DTV",
                    headers: [.contentType: "application/json"],
                    body: #"{"platformMappingId":"DirecTV"}"#
                )
                #expect(put.status == .ok)
                let integration = try await client.send(
                    .put,
                    "/_sim/integrations/REF30/Verizon",
                    headers: [.contentType: "application/json"],
                    body: #"{"enabled":false}"#
                )
                #expect(integration.status == .ok)
                saved.withLock { $0 = Saved(appA: appA, appB: appB, platformToken: platformToken, serviceToken: serviceToken, saml: pending) }
            }
            let state = try #require(saved.withLock { $0 })

            clock.advance(by: .seconds(30))
            try await StateFileTests.harness(path, clock: clock).run { client in
                // Tokens issued before the restart still verify (the keys are in the state), and the links are there.
                let platform = try await client.profiles(state.appB, device: "other-tv", headers: Client.platformHeader(state.platformToken))
                #expect(platform["Cablevision"]?["type"] as? String == "platformSSO")
                let service = try await client.profiles(state.appB, device: "phone", headers: Client.serviceHeader(state.serviceToken))
                #expect(service["Cablevision"]?["type"] as? String == "serviceTokenSSO")
                // The appleSSO profile kept its type, and the pending answer is still exchangeable.
                #expect(try await client.profiles(state.appA, device: "apple-tv")["Comcast_SSO"]?["type"] as? String == "appleSSO")
                #expect(try await client.partnerProfile(state.appB, saml: state.saml, device: "apple-tv").status == .created)
                // Runtime settings.
                #expect(try await client.send(.get, "/_sim/mvpds/DTV").json()["platformMappingId"] as? String == "DirecTV")
                #expect(try await client.send(.get, "/_sim/integrations/REF30/Verizon").json()["enabled"] as? Bool == false)
                let sso = try await client.send(.get, "/_sim/sso").json()
                #expect((sso["links"] as? [Any])?.count == 2)
                #expect(((sso["profiles"] as? [String: Any])?["appleSSO"] as? [Any])?.count == 2)
            }
        }
    }
}
