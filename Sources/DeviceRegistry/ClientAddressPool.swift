/// Hands out the devices' client addresses from a fleet's IPv4 addresses (`client_address.addresses`: CIDR ranges
/// and single addresses), each once, so a backend sees every device as its own box: as the bound source address of
/// its connections (`bind`) or in `X-Forwarded-For` (`forwarded-for`).
///
/// Configured devices take the address at their ordinal among the configured devices of the fleets sharing these
/// addresses (every shard's devices counted), so a device has the same address whichever shard runs it and shards
/// never hand out the same one. Other devices (added over the socket, or whose address was taken) get free addresses
/// past that block, in their shard's lane (offsets ≡ K mod N).
///
/// A range's network and broadcast addresses (prefixes up to /30) are never handed out.
///
/// Written by hand: none of the project's dependencies parses CIDR notation or walks a range.
package struct ClientAddressPool: Sendable {
    /// The default of `forwarded-for`: 198.18.0.0/15, set aside for benchmarking (RFC 2544), 131,070 addresses.
    package static let forwardedForRange = "198.18.0.0/15"
    /// The default of `bind` on a loopback backend: every 127.0.0.0/8 address is local on Linux; this half of it
    /// (8,388,606 addresses) stays clear of 127.0.0.1 and the 127.0.x.y addresses services listen on.
    package static let loopbackRange = "127.128.0.0/9"

    /// The address blocks in order: first address and how many follow it.
    package let blocks: [Block]
    package let size: UInt64
    private var used: Set<UInt32> = []
    private var cursor: UInt64 = 0
    /// Offsets below this are the configured devices' (``claim(ordinal:)``); ``allocate()`` skips them.
    package var configuredBlock: UInt64 = 0
    /// ``allocate()`` hands out only offsets ≡ `lane.index` (mod `lane.count`): one lane per shard.
    package var lane: (index: UInt64, count: UInt64) = (0, 1)

    package struct Block: Sendable, Equatable {
        package var first: UInt32
        package var count: UInt64

        package func contains(_ address: UInt32) -> Bool {
            address >= first && UInt64(address - first) < count
        }
    }

    /// A pool over `text`: CIDR ranges (`a.b.c.d/len`, len 8…32) and single addresses, separated by commas or
    /// spaces; nil when it is not that, or lists an address twice.
    package init?(addresses text: String) {
        var blocks: [Block] = []
        for item in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            guard let block = Self.block(String(item)) else { return nil }
            if blocks.contains(where: { $0.overlaps(block) }) { return nil }
            blocks.append(block)
        }
        guard !blocks.isEmpty else { return nil }
        self.blocks = blocks
        self.size = blocks.reduce(0) { $0 + $1.count }
    }

    private static func block(_ item: String) -> Block? {
        let parts = item.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = parse(String(parts[0])) else { return nil }
        guard parts.count == 2 else { return Block(first: address, count: 1) }
        guard let length = Int(parts[1]), (8...32).contains(length) else { return nil }
        let mask: UInt32 = length == 32 ? .max : ~(UInt32.max >> UInt32(length))
        let size = UInt64(1) << UInt64(32 - length)
        // The network and broadcast addresses of a range that has them are no host's.
        return length <= 30 ? Block(first: (address & mask) + 1, count: size - 2) : Block(first: address & mask, count: size)
    }

    /// The address at `offset` (below ``size``).
    package func address(at offset: UInt64) -> UInt32 {
        var rest = offset
        for block in blocks {
            if rest < block.count { return block.first &+ UInt32(truncatingIfNeeded: rest) }
            rest -= block.count
        }
        preconditionFailure("offset \(offset) past the pool's \(size) addresses")
    }

    /// Whether `address` is one of the pool's.
    package func contains(_ address: String) -> Bool {
        guard let value = Self.parse(address) else { return false }
        return blocks.contains { $0.contains(value) }
    }

    /// Whether every address lies in 127.0.0.0/8 (loopback: local to every Linux host).
    package var isLoopback: Bool {
        blocks.allSatisfy { $0.first >> 24 == 127 && ($0.first &+ UInt32(truncatingIfNeeded: $0.count - 1)) >> 24 == 127 }
    }

    /// Marks addresses already held by stored devices as taken.
    package mutating func reserve<S: Sequence<String>>(_ addresses: S) {
        for address in addresses {
            if let value = Self.parse(address), blocks.contains(where: { $0.contains(value) }) { used.insert(value) }
        }
    }

    /// Frees an address handed out or reserved before.
    package mutating func release(_ address: String) {
        if let value = Self.parse(address) { used.remove(value) }
    }

    /// Whether `address` is handed out or reserved.
    package func isTaken(_ address: String) -> Bool {
        Self.parse(address).map { used.contains($0) } ?? false
    }

    /// The address of the configured `ordinal`-th device (0-based, every shard's devices counted), or nil when the
    /// pool is smaller or the address is taken.
    package mutating func claim(ordinal: Int) -> String? {
        guard ordinal >= 0, UInt64(ordinal) < size else { return nil }
        let candidate = address(at: UInt64(ordinal))
        return used.insert(candidate).inserted ? Self.format(candidate) : nil
    }

    /// The next free address of this lane past the configured block (of the lane anywhere when the
    /// block fills the pool), or nil when every one is taken.
    package mutating func allocate() -> String? {
        guard UInt64(used.count) < size else { return nil }
        let start = configuredBlock < size ? configuredBlock : 0
        for _ in 0..<size {
            let offset = (start + cursor) % size
            cursor += 1
            guard offset >= start, offset % lane.count == lane.index else { continue }
            let candidate = address(at: offset)
            if used.insert(candidate).inserted { return Self.format(candidate) }
        }
        return nil
    }

    package static func parse(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard octet.count <= 3, let byte = UInt8(octet) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    package static func format(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }
}

extension ClientAddressPool.Block {
    package func overlaps(_ other: Self) -> Bool {
        let end = UInt64(first) + count
        let otherEnd = UInt64(other.first) + other.count
        return UInt64(first) < otherEnd && UInt64(other.first) < end
    }
}
