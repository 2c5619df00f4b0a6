import OAuthDeviceGrant
import Testing

@testable import RegcodeDaemon

/// `protocol: oauth-device` and the `oauth:` section: read into the fleet, and what start-up refuses.
@Suite struct OAuthConfigurationTests {
    @Test func anOAuthFleetIsReadWithItsClientAndEndpoints() throws {
        let yaml = """
            fleets:
              - name: tv
                protocol: oauth-device
                oauth:
                  provider: keycloak
                  realm: tv
                  issuer: https://sso.lab.example
                  client_id: living-room
                  client_authentication: client_secret_post
                  client_secret_file: /etc/regcoded/tv-secret
                  token_endpoint: /custom/token
                  scope: openid offline_access
                  exercise: introspection
                  exercise_every: 30s
                  refresh_margin: 2m
                  misbehave: ignore-slow-down
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        try configuration.validate()
        let fleet = configuration.fleets[0]
        #expect(fleet.deviceProtocol == .oauthDevice)
        let oauth = fleet.oauth.device
        #expect(oauth.provider == .keycloak)
        #expect(oauth.placeholders.realm == "tv")
        #expect(oauth.issuer == "https://sso.lab.example")
        #expect(oauth.clientID == "living-room")
        #expect(oauth.clientAuthentication == .clientSecretPost)
        #expect(oauth.endpoints == [.token: "/custom/token"])
        #expect(oauth.scope == "openid offline_access")
        #expect(oauth.exercise == .introspection)
        #expect(oauth.exerciseEveryMs == 30_000)
        #expect(oauth.refreshMarginMs == 120_000)
        #expect(oauth.misbehave == .ignoreSlowDown)
        #expect(fleet.oauth.clientSecretFile == "/etc/regcoded/tv-secret")
    }

    @Test(arguments: [
        ("protocol: oauth-device\n    apps:\n      - id: A\n        bundle_id: com.x.A\n        team_id: T1", "fleets[0].protocol"),
        (
            "protocol: oauth-device\n    oauth:\n      provider: entra\n      client_authentication: client_secret_post",
            "fleets[0].oauth.client_authentication"
        ),
        ("protocol: oauth-device\n    oauth:\n      client_authentication: private_key_jwt", "fleets[0].oauth.private_key_file"),
        ("persona: rest-v2\n    profile: v1", "fleets[0].persona"),
    ])
    func startUpRefuses(fleet: String, key: String) throws {
        let configuration = try ConfigurationFile.parse("fleets:\n  - name: tv\n    \(fleet)\n", file: "x.yaml")
        #expect(throws: (any Error).self) { try configuration.validate() }
        do {
            try configuration.validate()
        } catch {
            #expect(error.key == key, "\(error)")
        }
    }

    @Test func anUnknownOAuthKeyIsRefusedWithItsPath() {
        let yaml = "fleets:\n  - name: tv\n    protocol: oauth-device\n    oauth:\n      client_sekret: x\n"
        #expect(throws: (any Error).self) { try ConfigurationFile.parse(yaml, file: "x.yaml") }
    }
}
