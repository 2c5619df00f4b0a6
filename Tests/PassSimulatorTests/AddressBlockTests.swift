import Foundation
import Testing

@testable import PassSimulator

@Suite("Address blocks")
struct AddressBlockTests {
    @Test func blocksMatchIPv4IPv6AndMappedAddresses() throws {
        let v4 = try #require(AddressBlock("10.1.0.0/16"))
        #expect(v4.contains("10.1.255.3"))
        #expect(!v4.contains("10.2.0.1"))
        #expect(v4.contains("::ffff:10.1.2.3"))
        #expect(!v4.contains("2001:db8::1"))
        let v6 = try #require(AddressBlock("2001:db8::/32"))
        #expect(v6.contains("2001:db8:ffff::9"))
        #expect(v6.contains("[2001:db8::1]"))
        #expect(!v6.contains("2001:db9::1"))
        #expect(!v6.contains("10.1.0.1"))
        let host = try #require(AddressBlock("192.0.2.7"))
        #expect(host.contains("192.0.2.7"))
        #expect(!host.contains("192.0.2.8"))
        #expect(try #require(AddressBlock("0.0.0.0/0")).contains("203.0.113.1"))
        #expect(try #require(AddressBlock("fe80::/10")).contains("fe80::1%eth0"))
        for bad in ["10.1.0.0/33", "nowhere", "1.2.3", "1.2.3.256", "1::2::3", "12345::", "::/129", ""] {
            #expect(AddressBlock(bad) == nil, "\(bad)")
        }
    }

    @Test func homeNetworksRefuseBadBlocks() throws {
        let decoder = JSONDecoder()
        let home = try decoder.decode(HomeNetwork.self, from: Data(#"{"addresses":["10.1.0.0/16"],"ttl":60}"#.utf8))
        #expect(home.contains("10.1.0.9"))
        #expect(!home.contains(nil))
        #expect(throws: (any Error).self) { try decoder.decode(HomeNetwork.self, from: Data(#"{"addresses":["10.1.0.0/33"]}"#.utf8)) }
        #expect(throws: (any Error).self) { try decoder.decode(HomeNetwork.self, from: Data(#"{"addresses":["10.0.0.0/8"],"ttl":0}"#.utf8)) }
    }
}
