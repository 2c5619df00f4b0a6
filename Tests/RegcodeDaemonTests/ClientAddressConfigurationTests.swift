import RegcodeEngine
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// `client_address:`: its modes and defaults, the addresses each mode uses, what stops a start, and the warning a
/// shared address earns.
@Suite struct ClientAddressConfigurationTests {
    private func configuration(backend: String?, _ fleet: (inout FleetConfiguration) -> Void = { _ in }) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        configuration.backend = backend
        fleet(&configuration.fleets[0])
        return configuration
    }

    @Test(arguments: [nil, "http://127.0.0.1:8080", "http://localhost:9000"])
    func aLoopbackBackendBindsALoopbackRangeByDefault(backend: String?) throws {
        let configuration = configuration(backend: backend)
        #expect(configuration.clientAddressMode(of: configuration.fleets[0]) == .bind)
        #expect(configuration.clientAddressRange(of: configuration.fleets[0]) == ClientAddressPool.loopbackRange)
        try configuration.validateClientAddresses(localAddresses: [])
    }

    @Test func anyOtherBackendSeesTheHostsAddressAndNoAddressIsHandedOut() throws {
        let configuration = configuration(backend: "https://api.auth.adobe.com")
        #expect(configuration.clientAddressMode(of: configuration.fleets[0]) == .host)
        #expect(configuration.clientAddressRange(of: configuration.fleets[0]) == nil)
        try configuration.validateClientAddresses(localAddresses: [])
    }

    @Test func forwardedForUsesTheBenchmarkingRangeUnlessTold() {
        var configuration = configuration(backend: "https://api.auth.adobe.com") { $0.clientAddress.mode = .forwardedFor }
        #expect(configuration.clientAddressRange(of: configuration.fleets[0]) == ClientAddressPool.forwardedForRange)
        configuration.clientAddresses = "100.64.0.0/16"
        #expect(configuration.clientAddressRange(of: configuration.fleets[0]) == "100.64.0.0/16")
        configuration.fleets[0].clientAddress.addresses = "100.65.0.0/24"
        #expect(configuration.clientAddressRange(of: configuration.fleets[0]) == "100.65.0.0/24")
    }

    @Test func theCatalogGivesDevicesTheirFleetsResolvedMode() throws {
        let local = try DeviceCatalog.load(configuration: configuration(backend: nil), environment: [:])
        #expect(local.settings(for: "stb-1", fleet: local.fleets[0]).clientAddressMode == .bind)
        let forwarded = try DeviceCatalog.load(
            configuration: configuration(backend: nil) { $0.clientAddress.mode = .forwardedFor },
            environment: [:]
        )
        let settings = forwarded.settings(for: "stb-1", fleet: forwarded.fleets[0])
        #expect(settings.clientAddressMode == .forwardedFor)
        #expect(forwarded.fleets[0].clientAddress.addresses == ClientAddressPool.forwardedForRange)
    }

    @Test func theKeyReadsAModeOrAModeWithAddresses() throws {
        let yaml = """
            fleets:
              - name: plain
                client_address: host
              - name: proxied
                client_address: forwarded-for
              - name: listed
                client_address:
                  mode: bind
                  addresses: [127.0.1.1, 127.0.2.0/30]
              - name: ranged
                client_address: {addresses: 127.0.3.0/24}
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        #expect(configuration.fleets.map(\.clientAddress.mode) == [.host, .forwardedFor, .bind, nil])
        #expect(configuration.fleets[2].clientAddress.addresses == "127.0.1.1, 127.0.2.0/30")
        #expect(configuration.fleets[3].clientAddress.addresses == "127.0.3.0/24")
        try configuration.validate()
    }

    @Test(arguments: [
        ("client_address: nat", "fleets[0].client_address"),
        ("client_address: {mode: bind, port: 1}", "fleets[0].client_address.port"),
        ("forwarded_for: true", "fleets[0].forwarded_for"),
        ("forwarded_for: false", "fleets[0].forwarded_for"),
    ])
    func unknownModesAndTheReplacedKeyAreRefused(line: String, key: String) {
        let yaml = "fleets:\n  - name: lab\n    \(line)\n"
        let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.parse(yaml, file: "x.yaml") }
        #expect(error?.key == key)
        if line.hasPrefix("forwarded_for") { #expect(error?.reason.contains("client_address: forwarded-for") == true) }
    }

    @Test func aBindAddressThatIsNotLocalIsNamed() {
        let configuration = configuration(backend: nil) {
            $0.count = 2
            $0.clientAddress = ClientAddressConfiguration(mode: .bind, addresses: "127.0.1.1, 192.0.2.77")
        }
        let local = ClientAddressPool.parse("192.0.2.77")!
        #expect(throws: Never.self) { try configuration.validateClientAddresses(localAddresses: [local]) }
        let error = #expect(throws: ConfigurationError.self) { try configuration.validateClientAddresses(localAddresses: []) }
        #expect(error?.key == "fleets[0].client_address.addresses")
        #expect(error?.reason.contains("192.0.2.77 is not an address of this host") == true)
    }

    @Test func aLoopbackListCannotReachARemoteBackendAndAShortListIsRefused() {
        let remote = configuration(backend: "http://10.9.9.9:8080") { $0.clientAddress.mode = .bind }
        #expect(throws: ConfigurationError.self) { try remote.validateClientAddresses(localAddresses: []) }
        var short = configuration(backend: nil) {
            $0.count = 3
            $0.clientAddress = ClientAddressConfiguration(mode: .bind, addresses: "127.0.1.1, 127.0.1.2")
        }
        let error = #expect(throws: ConfigurationError.self) { try short.validateClientAddresses(localAddresses: []) }
        #expect(error?.reason.contains("2 addresses for 3 devices") == true)
        short.fleets[0].count = 2
        #expect(throws: Never.self) { try short.validateClientAddresses(localAddresses: []) }
    }

    @Test func devicesSharingTheHostsAddressGetTheArithmetic() throws {
        var configuration = configuration(backend: "http://10.0.0.5:8080") {
            $0.count = 50
            $0.clientAddress.mode = .host
        }
        let warning = try #require(configuration.sharedAddressWarning())
        #expect(warning.contains("50 devices (fleet stb, client_address: host) share this host's address"), "\(warning)")
        #expect(warning.contains("50 × 0.2 polls/s = 10 requests/s per address against Adobe's 1 request/s (burst 10)"), "\(warning)")
        #expect(warning.contains("expect about 90% of polls answered 429"), "\(warning)")
        // Within the rate (5 devices every 5 s), or each device on its own address: nothing to say.
        configuration.fleets[0].count = 5
        #expect(configuration.sharedAddressWarning() == nil)
        configuration.fleets[0].count = 50
        configuration.fleets[0].clientAddress.mode = .bind
        #expect(configuration.sharedAddressWarning() == nil)
    }

    @Test func addressPoolsKeepEachListsOrdinalsAndNeverHandOutAStoredAddress() throws {
        var configuration = configuration(backend: nil) { $0.count = 3 }
        var second = FleetConfiguration()
        second.name = "lab"
        second.count = 2
        second.clientAddress = ClientAddressConfiguration(mode: .bind, addresses: "127.0.9.0/29")
        configuration.fleets.append(second)
        let catalog = try DeviceCatalog.load(configuration: configuration, environment: [:])
        var pools = ClientAddressPools(shard: nil)
        pools.configure(catalog)
        pools.reserve(["127.0.9.2"])
        let range = "127.0.9.0/29"
        let ordinal = catalog.ordinal(ofDevice: "lab-1") { $0.clientAddress.addresses == range }
        #expect(ordinal == 0)
        #expect(pools.take(range: range, ordinal: ordinal) == "127.0.9.1")
        // lab-2's own address is held by a stored device: the next free one past the configured block.
        #expect(pools.take(range: range, ordinal: 1) == "127.0.9.3")
        #expect(pools.contains("127.0.9.6", range: range) && !pools.contains("127.0.9.7", range: range))
        #expect(pools.take(range: ClientAddressPool.loopbackRange, ordinal: catalog.ordinal(ofDevice: "stb-1")) == "127.128.0.1")
    }
}
