/// Hands out the devices' emulated client addresses (sent as `X-Forwarded-For`) from an IPv4
/// range, each once, so a backend that throttles per client address sees every device as its own
/// box. Addresses are data only: nothing ever connects to them.
///
/// Configured devices take the address at their ordinal in the whole configuration (every shard's
/// devices counted), so a device has the same address whichever shard runs it and shards never
/// hand out the same one. Other devices (added over the socket, or whose address was taken) get
/// free addresses past that block, in their shard's lane (offsets ≡ K mod N).
///
/// Written by hand: none of the project's dependencies parses CIDR notation or walks a range.
struct ClientAddressPool: Sendable {
    /// The default range: 198.18.0.0/15, set aside for benchmarking (RFC 2544), 131,072 addresses.
    static let defaultRange = "198.18.0.0/15"

    let base: UInt32
    let size: UInt64
    private var used: Set<UInt32> = []
    private var cursor: UInt64 = 0
    /// Offsets below this are the configured devices' (``claim(ordinal:)``); ``allocate()`` skips them.
    var configuredBlock: UInt64 = 0
    /// ``allocate()`` hands out only offsets ≡ `lane.index` (mod `lane.count`): one lane per shard.
    var lane: (index: UInt64, count: UInt64) = (0, 1)

    /// A pool over `cidr` (`a.b.c.d/len`), or nil when it is not one.
    init?(cidr: String) {
        let parts = cidr.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let length = Int(parts[1]), (8...32).contains(length), let address = Self.parse(String(parts[0])) else {
            return nil
        }
        let mask: UInt32 = length == 32 ? .max : ~(UInt32.max >> UInt32(length))
        base = address & mask
        size = UInt64(1) << UInt64(32 - length)
    }

    /// Marks addresses already held by stored devices as taken.
    mutating func reserve<S: Sequence<String>>(_ addresses: S) {
        for address in addresses {
            if let value = Self.parse(address) { used.insert(value) }
        }
    }

    /// The address of the configuration's `ordinal`-th device (0-based, every shard's devices
    /// counted), or nil when the range is smaller or the address is taken.
    mutating func claim(ordinal: Int) -> String? {
        guard ordinal >= 0, UInt64(ordinal) < size else { return nil }
        let candidate = base &+ UInt32(truncatingIfNeeded: ordinal)
        return used.insert(candidate).inserted ? Self.format(candidate) : nil
    }

    /// The next free address of this lane past the configured block (of the lane anywhere when the
    /// block fills the range), or nil when every one is taken.
    mutating func allocate() -> String? {
        guard UInt64(used.count) < size else { return nil }
        let start = configuredBlock < size ? configuredBlock : 0
        for _ in 0..<size {
            let offset = (start + cursor) % size
            cursor += 1
            guard offset >= start, offset % lane.count == lane.index else { continue }
            let candidate = base &+ UInt32(truncatingIfNeeded: offset)
            if used.insert(candidate).inserted { return Self.format(candidate) }
        }
        return nil
    }

    static func parse(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard octet.count <= 3, let byte = UInt8(octet) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    static func format(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }
}
