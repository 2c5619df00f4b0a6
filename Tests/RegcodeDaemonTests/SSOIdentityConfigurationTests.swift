import Foundation
import RegcodeEngine
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// `sso_identity:` (REST v2 single sign-on identities, sso.md §3.3) in the configuration file, down to the devices.
@Suite struct SSOIdentityConfigurationTests {
    @Test func ssoIdentityFromDefaultsAndFleetsReachesDeviceSettings() throws {
        let yaml = """
            defaults:
              sso_identity:
                platform_user: alice
            fleets:
              - name: roku
                count: 1
                sso_identity:
                  roku_header: true
                  service_user: bob
              - name: amazon
                count: 1
              - name: plain
                count: 1
                sso_identity:
                  platform_user: null
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        #expect(configuration.fleets[0].ssoIdentity == SSOIdentitySettings(platformUser: "alice", rokuHeader: true, serviceUser: "bob"))
        #expect(configuration.fleets[1].ssoIdentity == SSOIdentitySettings(platformUser: "alice"))
        #expect(configuration.fleets[2].ssoIdentity == nil, "a section naming no user is no identity")

        let catalog = DeviceCatalog(fleets: configuration.fleets, secrets: [:])
        #expect(catalog.settings(for: "roku-1", fleet: configuration.fleets[0]).ssoIdentity?.serviceUser == "bob")
        #expect(catalog.settings(for: "amazon-1", fleet: configuration.fleets[1]).ssoIdentity == SSOIdentitySettings(platformUser: "alice"))
        #expect(catalog.settings(for: "plain-1", fleet: configuration.fleets[2]).ssoIdentity == nil)
        #expect(try ConfigurationFile.parse("fleets:\n  - name: a\n", file: nil).fleets[0].ssoIdentity == nil)
    }

    @Test(arguments: [
        ("fleets:\n  - name: a\n    sso_identity:\n      platform: alice\n", "fleets[0].sso_identity.platform", "unknown key"),
        ("fleets:\n  - name: a\n    sso_identity:\n      roku_header: maybe\n", "fleets[0].sso_identity.roku_header", "not true or false"),
        ("fleets:\n  - name: a\n    sso_identity: alice\n", "fleets[0].sso_identity", "expected a mapping"),
        ("defaults:\n  sso_identity:\n    service_user: [a, b]\n", "defaults.sso_identity.service_user", "single value"),
    ])
    func badSSOIdentityNamesKeyAndReason(yaml: String, key: String, reason: String) {
        do {
            _ = try ConfigurationFile.parse(yaml, file: "lab.yaml")
            Issue.record("accepted a bad configuration")
        } catch {
            #expect(error.key == key)
            #expect(error.reason.contains(reason))
        }
    }
}
