import Foundation
import RegcodeEngine
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

@Suite struct ConnectionsConfigurationTests {
    @Test func eachFleetCarriesItsConnectionModelToItsDevices() throws {
        let yaml = """
            fleets:
              - name: pooled
                count: 1
              - name: lab
                count: 1
                connections: shared 16
              - name: boxes
                count: 1
                connections: per-device
              - name: fresh
                count: 1
                connections: Per-Request
              - name: plain
                count: 1
                connections: shared
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        #expect(configuration.fleets.map(\.connections) == [.common, .shared(16), .perDevice, .perRequest, .common])
        let catalog = DeviceCatalog(fleets: configuration.fleets, secrets: [:])
        let models = configuration.fleets.map { catalog.settings(for: "\($0.name)-1", fleet: $0).connections }
        #expect(models == [nil, .shared(pool: "lab", connections: 16), .perDevice, .perRequest, nil])
    }

    @Test(arguments: ["shared 0", "shared many", "per device", "pooled", "shared 16 32", "shared 100001"])
    func aBadModelNamesTheKeyAndTheChoices(_ text: String) {
        do {
            _ = try ConfigurationFile.parse("fleets:\n  - name: a\n    connections: \(text)\n", file: "lab.yaml")
            Issue.record("accepted connections: \(text)")
        } catch {
            #expect(error.key == "fleets[0].connections")
            #expect(error.reason.contains("per-device"))
        }
    }

    @Test func storedSettingsKeepTheModelAndOlderOnesReadAsCommon() throws {
        var settings = DeviceSettings(name: "boxes-1", requestor: "REF30")
        settings.connections = .shared(pool: "lab", connections: 4)
        let encoded = try JSONEncoder().encode(settings)
        #expect(try JSONDecoder().decode(DeviceSettings.self, from: encoded).connections == .shared(pool: "lab", connections: 4))
        let older = #"{"name":"boxes-1","requestor":"REF30"}"#
        #expect(try JSONDecoder().decode(DeviceSettings.self, from: Data(older.utf8)).connections == nil)
    }
}
