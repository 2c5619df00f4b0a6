import Foundation
import RegcodeEngine
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// What a fleet presents to the backend, where its client addresses come from, and what the daemon
/// refuses to start with.
@Suite struct HostileBackendConfigurationTests {
    @Test func addressesComeFromTheRangeInOrderSkippingTakenOnesAndRunOut() {
        // A /29's network and broadcast addresses are no host's.
        var pool = ClientAddressPool(addresses: "10.1.2.0/29")!
        #expect(pool.size == 6)
        pool.reserve(["10.1.2.2", "10.9.9.9"])
        #expect(pool.allocate() == "10.1.2.1")
        #expect(pool.allocate() == "10.1.2.3")
        for _ in 0..<3 { #expect(pool.allocate() != nil) }
        #expect(pool.allocate() == nil)
        // A /31 and a /32 are all hosts.
        #expect(ClientAddressPool(addresses: "10.1.2.0/31")?.size == 2)
        #expect(ClientAddressPool(addresses: "10.1.2.9/32")?.size == 1)
    }

    @Test func aListOfAddressesAndRangesIsWalkedInOrder() {
        var pool = ClientAddressPool(addresses: "10.0.0.5, 10.0.0.9 192.168.7.0/30")!
        #expect(pool.size == 4)
        #expect((0..<4).map { pool.claim(ordinal: $0) } == ["10.0.0.5", "10.0.0.9", "192.168.7.1", "192.168.7.2"])
        #expect(pool.claim(ordinal: 4) == nil)
        #expect(pool.contains("192.168.7.2") && !pool.contains("192.168.7.3") && !pool.contains("10.0.0.6"))
    }

    @Test func theDefaultRangesAreTheBenchmarkingRangeAndHalfOfLoopback() {
        var forwarded = ClientAddressPool(addresses: ClientAddressPool.forwardedForRange)!
        #expect(forwarded.size == 131_070)
        #expect(forwarded.allocate() == "198.18.0.1")
        #expect(!forwarded.isLoopback)
        var loopback = ClientAddressPool(addresses: ClientAddressPool.loopbackRange)!
        #expect(loopback.isLoopback)
        #expect(loopback.allocate() == "127.128.0.1")
        // A range given off its boundary starts at the boundary.
        var offset = ClientAddressPool(addresses: "198.19.255.7/24")!
        #expect(offset.allocate() == "198.19.255.1")
    }

    @Test(arguments: ["198.18.0.0/7", "300.1.1.1/16", "a.b.c.d/16", "1.2.3/24", "", "10.0.0.1, 10.0.0.1", "10.0.0.0/24, 10.0.0.7"])
    func malformedRangesAreRefused(cidr: String) throws {
        #expect(ClientAddressPool(addresses: cidr) == nil)
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
                client_address: host
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
        #expect(fleet.clientAddress == ClientAddressConfiguration(mode: .host))
        #expect(fleet.poll.stageRetries == 12)
        #expect(fleet.poll.stageBackoffBase == .seconds(2))
        #expect(fleet.poll.stageBackoffCap == .seconds(20))
        #expect(fleet.poll.codeRecoveries == 5)
    }

    @Test func aDeviceUsesItsAddressOnlyAsItsModeSays() {
        var settings = DeviceSettings(name: "lab-1", requestor: "REF30")
        settings.clientAddress = "198.18.0.7"
        #expect(settings.clientAddressMode == .host)
        #expect(settings.forwardedFor == nil && settings.sourceAddress == nil)
        settings.clientAddressMode = .forwardedFor
        #expect(settings.forwardedFor == "198.18.0.7" && settings.sourceAddress == nil)
        settings.clientAddressMode = .bind
        #expect(settings.forwardedFor == nil && settings.sourceAddress == "198.18.0.7")
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
