import Foundation
import RegcodeEngine
import Testing

@testable import RegcodeDaemon

/// What a fleet presents to the backend, where its client addresses come from, and what the daemon
/// refuses to start with.
@Suite struct HostileBackendConfigurationTests {
    @Test func addressesComeFromTheRangeInOrderSkippingTakenOnesAndRunOut() {
        var pool = ClientAddressPool(cidr: "10.1.2.0/30")!
        pool.reserve(["10.1.2.1"])
        #expect(pool.allocate() == "10.1.2.0")
        #expect(pool.allocate() == "10.1.2.2")
        #expect(pool.allocate() == "10.1.2.3")
        #expect(pool.allocate() == nil)
    }

    @Test func theDefaultRangeIsTheBenchmarkingRange() {
        var pool = ClientAddressPool(cidr: ClientAddressPool.defaultRange)!
        #expect(pool.size == 131_072)
        #expect(pool.allocate() == "198.18.0.0")
        // A range given off its boundary starts at the boundary.
        var offset = ClientAddressPool(cidr: "198.19.255.7/24")!
        #expect(offset.allocate() == "198.19.255.0")
    }

    @Test(arguments: ["198.18.0.0", "198.18.0.0/7", "300.1.1.1/16", "a.b.c.d/16", "1.2.3/24", ""])
    func malformedRangesAreRefused(cidr: String) throws {
        #expect(ClientAddressPool(cidr: cidr) == nil)
        var configuration = DaemonConfiguration()
        configuration.clientAddresses = cidr
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    @Test func fleetKeysSetWhatTheDevicePresentsAndPollKeysTheStageBounds() throws {
        let yaml = """
            client_addresses: 100.64.0.0/16
            fleets:
              - name: lab
                domain_name: example.tv
                redirect_url: https://example.tv/done
                client_redirect_uri: example://tv
                user_agent: Lab/1.0
                forwarded_for: false
                poll:
                  stage_retries: 12
                  stage_backoff_base: 2s
                  stage_backoff_cap: 20s
                  code_recoveries: 5
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        try configuration.validate()
        #expect(configuration.clientAddresses == "100.64.0.0/16")
        let fleet = configuration.fleets[0]
        #expect(fleet.identity.domainName == "example.tv")
        #expect(fleet.identity.redirectURL == "https://example.tv/done")
        #expect(fleet.identity.clientRedirectURI == "example://tv")
        #expect(fleet.identity.userAgent == "Lab/1.0")
        #expect(!fleet.identity.sendsForwardedFor)
        #expect(fleet.poll.stageRetries == 12)
        #expect(fleet.poll.stageBackoffBase == .seconds(2))
        #expect(fleet.poll.stageBackoffCap == .seconds(20))
        #expect(fleet.poll.codeRecoveries == 5)
    }

    @Test func aDeviceSendsItsAddressOnlyWhenItsFleetSaysSo() {
        var settings = DeviceSettings(name: "lab-1", requestor: "REF30")
        settings.clientAddress = "198.18.0.7"
        #expect(settings.forwardedFor == "198.18.0.7")
        settings.identity.sendsForwardedFor = false
        #expect(settings.forwardedFor == nil)
    }

    @Test func storedSettingsOfAnOlderVersionKeepTheNewDefaults() throws {
        var current = DeviceSettings(name: "stb-1", requestor: "REF30")
        current.polling.interval = .seconds(7)
        // What an older version wrote: no identity, no stage keys.
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(current)) as? [String: Any])
        object["identity"] = nil
        var polling = try #require(object["polling"] as? [String: Any])
        for key in ["stageRetries", "stageBackoffBase", "stageBackoffCap", "codeRecoveries"] { polling[key] = nil }
        object["polling"] = polling
        let old = try JSONSerialization.data(withJSONObject: object)
        let settings = try JSONDecoder().decode(DeviceSettings.self, from: old)
        #expect(settings.identity == ClientIdentity())
        #expect(settings.polling.stageRetries == PollPolicy().stageRetries)
        #expect(settings.polling.interval == .seconds(7))
        // The address lives in its own column, never in the settings JSON.
        var withAddress = settings
        withAddress.clientAddress = "198.18.0.1"
        let encoded = String(decoding: try JSONEncoder().encode(withAddress), as: UTF8.self)
        #expect(!encoded.contains("198.18.0.1"))
    }

    @Test(arguments: ["https://api.auth.adobe.com", "http://10.0.0.5:8080"])
    func aV2FleetAgainstARemoteBackendNeedsItsOwnSoftwareStatement(backend: String) {
        var configuration = DaemonConfiguration()
        configuration.backend = backend
        #expect(throws: ConfigurationError.self) { try DeviceCatalog.load(configuration: configuration, environment: [:]) }
    }

    @Test(arguments: [nil, "http://127.0.0.1:8080", "http://localhost:9000"])
    func aLocalBackendMayUseTheEmbeddedStatement(backend: String?) throws {
        var configuration = DaemonConfiguration()
        configuration.backend = backend
        let catalog = try DeviceCatalog.load(configuration: configuration, environment: [:])
        #expect(catalog.secrets["stb"]?.softwareStatement == DeviceCatalog.embeddedSoftwareStatement)
    }

    @Test func theEmbeddedSimulatorKeepsItsStateBesideTheDatabase() {
        var configuration = DaemonConfiguration()
        #expect(configuration.simulatorStatePath == "./regcoded.pass-sim.sqlite")
        configuration.database = "/var/lib/regcoded/lab.db"
        #expect(configuration.simulatorStatePath == "/var/lib/regcoded/lab.db.pass-sim.sqlite")
    }
}
