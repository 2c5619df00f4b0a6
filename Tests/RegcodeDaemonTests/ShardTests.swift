import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// `--shard K/N`: what it accepts, how it slices fleets, and what stays the same whichever shard runs a device.
@Suite struct ShardTests {
    static func fleet(_ name: String, _ count: Int) -> FleetConfiguration {
        var fleet = FleetConfiguration()
        fleet.name = name
        fleet.count = count
        return fleet
    }

    @Test(arguments: [("0/3", 0, 3), ("2/3", 2, 3), ("0/1", 0, 1), ("41/42", 41, 42)])
    func wellFormedShardsParse(text: String, index: Int, count: Int) throws {
        let shard = try Shard.parse(text).get()
        #expect(shard.index == index && shard.count == count)
        #expect(shard.description == text)
    }

    @Test(arguments: ["3/3", "5/3", "0/0", "-1/3", "+1/3", "1", "1/3/4", "a/b", " 1/3", "1/ 3", "", "/", "0/10001", "1-3", "0x1/3"])
    func badShardsAreRefusedWithAReason(text: String) {
        guard case .failure(let problem) = Shard.parse(text) else {
            Issue.record("'\(text)' was accepted")
            return
        }
        #expect(problem.reason.contains("'\(text)'"))
    }

    @Test func theRuleReadsFNV1aOfTheFleetName() {
        // FNV-1a 64-bit test vectors: the rotation must never change between releases or hosts.
        #expect(StableHash.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.fnv1a64("foobar") == 0x8594_4171_f739_67e8)
        let rotation = Int(StableHash.fnv1a64("stb") % 3)
        #expect(Shard.shard(ofFleet: "stb", member: 1, count: 3) == rotation)
        #expect(Shard.shard(ofFleet: "stb", member: 2, count: 3) == (rotation + 1) % 3)
        #expect(Shard.shard(ofFleet: "stb", member: 4, count: 3) == rotation)
    }

    @Test(arguments: 1...7)
    func everyConfiguredDeviceIsInExactlyOneShardAndFleetsAreBalanced(count: Int) throws {
        var configuration = DaemonConfiguration()
        configuration.fleets = [Self.fleet("stb", 30), Self.fleet("lab-tv", 1), Self.fleet("x", 7), Self.fleet("empty", 0)]
        var seen: [String: Int] = [:]
        for index in 0..<count {
            configuration.shard = try Shard.parse("\(index)/\(count)").get()
            for name in configuration.shardDeviceNames { seen[name, default: 0] += 1 }
            for fleet in configuration.fleets where fleet.count > 0 {
                let mine = fleet.deviceNames(in: configuration.shard).count
                // Balanced to within one device per fleet.
                #expect(mine >= fleet.count / count && mine <= (fleet.count + count - 1) / count, "\(fleet.name) \(index)/\(count): \(mine)")
            }
        }
        #expect(Set(seen.keys) == Set(configuration.deviceNames))
        #expect(seen.values.allSatisfy { $0 == 1 })
    }

    @Test func oneDeviceFleetsSpreadOverTheShards() {
        let owners = Set((0..<30).map { Shard.shard(ofFleet: "tv-\($0)", member: 1, count: 3) })
        #expect(owners == [0, 1, 2])
    }

    @Test func aShardOfOneIsTheWholeFleet() throws {
        var configuration = DaemonConfiguration()
        configuration.fleets = [Self.fleet("stb", 5)]
        configuration.shard = try Shard.parse("0/1").get()
        #expect(configuration.shardDeviceNames == configuration.deviceNames)
    }

    @Test func theConfigurationFileTakesAShard() throws {
        let configuration = try ConfigurationFile.parse("shard: 1/3\nfleets:\n  - {name: stb, count: 6}\n", file: "x.yaml")
        #expect(configuration.shard == (try Shard.parse("1/3").get()))
        #expect(configuration.shardDeviceNames.count == 2)
        for bad in ["3/3", "0/0", "one", "{a: 1}"] {
            let error = #expect(throws: ConfigurationError.self) { try ConfigurationFile.parse("shard: \(bad)\n", file: "x.yaml") }
            #expect(error?.key == "shard", "\(bad): \(String(describing: error))")
            #expect(error?.file == "x.yaml")
        }
    }

    @Test func aConfiguredDeviceHasTheSameAddressWhicheverShardRunsIt() throws {
        var configuration = DaemonConfiguration()
        configuration.fleets = [Self.fleet("stb", 5), Self.fleet("lab", 2)]
        let catalog = DeviceCatalog(fleets: configuration.fleets, secrets: [:])
        #expect(catalog.ordinal(ofDevice: "stb-1") == 0)
        #expect(catalog.ordinal(ofDevice: "lab-2") == 6)
        #expect(catalog.ordinal(ofDevice: "lab-3") == nil)
        #expect(catalog.ordinal(ofDevice: "stb-01") == nil)
        #expect(catalog.configuredDeviceCount == 7)

        // An unsharded pool and each shard's pool give a configured device the same address.
        var whole = ClientAddressPool(addresses: "10.0.0.0/24")!
        whole.configuredBlock = 7
        var addresses: [String: String] = [:]
        for name in configuration.deviceNames {
            addresses[name] = whole.claim(ordinal: catalog.ordinal(ofDevice: name)!)
        }
        #expect(addresses["stb-1"] == "10.0.0.1" && addresses["lab-2"] == "10.0.0.7")
        for index in 0..<3 {
            configuration.shard = try Shard.parse("\(index)/3").get()
            var pool = ClientAddressPool(addresses: "10.0.0.0/24")!
            pool.configuredBlock = 7
            pool.lane = (UInt64(index), 3)
            for name in configuration.shardDeviceNames {
                #expect(pool.claim(ordinal: catalog.ordinal(ofDevice: name)!) == addresses[name])
            }
        }
    }

    @Test func devicesOutsideTheConfigurationGetAddressesInTheirShardsLaneOnly() {
        var seen = Set<String>()
        for index in 0..<3 {
            var pool = ClientAddressPool(addresses: "10.0.0.0/27")!
            pool.configuredBlock = 4
            pool.lane = (UInt64(index), 3)
            var lane: [String] = []
            while let address = pool.allocate() { lane.append(address) }
            // Offsets 4…29 (10.0.0.5…10.0.0.30) past the configured block, every third one.
            #expect(lane.count == [8, 9, 9][index], "\(lane)")
            for address in lane {
                let offset = ClientAddressPool.parse(address)! - ClientAddressPool.parse("10.0.0.1")!
                #expect(offset >= 4 && offset % 3 == UInt32(index))
                #expect(seen.insert(address).inserted)
            }
        }
    }

    @Test func shardedMetricsCarryTheShardLabel() throws {
        let metrics = RegcodeMetrics(shard: try Shard.parse("1/3").get())
        metrics.sample(phases: [.polling: 2], subscriberCount: 1, cutOffCount: 0)
        let text = metrics.exposition()
        #expect(text.contains(#"regcoded_devices{shard="1/3",state="polling"} 2"#), "\(text)")
        #expect(text.contains(#"regcoded_subscribers{shard="1/3"} 1"#), "\(text)")
        let unsharded = RegcodeMetrics()
        unsharded.sample(phases: [.polling: 2], subscriberCount: 1, cutOffCount: 0)
        #expect(!unsharded.exposition().contains("shard="))
    }
}
