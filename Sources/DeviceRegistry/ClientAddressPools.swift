/// The daemon's ``ClientAddressPool``s: one per distinct address list the fleets use, each made on first use, with
/// every stored device's address reserved in all of them (so two lists that overlap never hand one out twice).
package struct ClientAddressPools: Sendable {
    private var pools: [String: ClientAddressPool] = [:]
    private var reserved: [String] = []
    /// Configured devices per address list (every shard's): the block ``ClientAddressPool/allocate()`` skips.
    private var configuredDevices: [String: UInt64] = [:]
    private let lane: (index: UInt64, count: UInt64)

    package init(shard: Shard?) {
        lane = shard.map { (UInt64($0.index), UInt64($0.count)) } ?? (0, 1)
    }

    /// Takes the configured fleets' address lists (at start and on reload).
    package mutating func configure(_ catalog: DeviceCatalog) {
        configuredDevices = [:]
        for fleet in catalog.fleets {
            if let range = fleet.clientAddress.addresses { configuredDevices[range, default: 0] += UInt64(max(0, fleet.count)) }
        }
        for range in pools.keys { pools[range]?.configuredBlock = configuredDevices[range] ?? 0 }
    }

    /// Marks the stored devices' addresses as taken.
    package mutating func reserve(_ addresses: [String]) {
        reserved += addresses
        for range in pools.keys { pools[range]?.reserve(addresses) }
    }

    /// Gives an address back (a device whose start was rolled back): it may be handed out again.
    package mutating func release(_ address: String) {
        if let index = reserved.firstIndex(of: address) { reserved.remove(at: index) }
        for range in pools.keys { pools[range]?.release(address) }
    }

    /// Whether `address` is handed out or reserved in `range`'s pool.
    package func isTaken(_ address: String, range: String) -> Bool {
        pools[range]?.isTaken(address) ?? reserved.contains(address)
    }

    /// Whether `address` is one of `range`'s.
    package func contains(_ address: String, range: String) -> Bool {
        pools[range]?.contains(address) ?? ClientAddressPool(addresses: range)?.contains(address) ?? false
    }

    /// An address of `range` for a device: the configured device's at `ordinal` (among the devices of the fleets that
    /// share `range`), else the next free one; nil when none is left.
    package mutating func take(range: String, ordinal: Int?) -> String? {
        if pools[range] == nil {
            guard var pool = ClientAddressPool(addresses: range) else { return nil }
            pool.reserve(reserved)
            pool.lane = lane
            pool.configuredBlock = configuredDevices[range] ?? 0
            pools[range] = pool
        }
        if let ordinal, let address = pools[range]?.claim(ordinal: ordinal) { return address }
        return pools[range]?.allocate()
    }
}
