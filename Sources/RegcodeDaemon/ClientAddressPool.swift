/// Hands out the devices' emulated client addresses (sent as `X-Forwarded-For`) from an IPv4
/// range, each once, so a backend that throttles per client address sees every device as its own
/// box. Addresses are data only: nothing ever connects to them.
///
/// Written by hand: none of the project's dependencies parses CIDR notation or walks a range.
struct ClientAddressPool: Sendable {
    /// The default range: 198.18.0.0/15, set aside for benchmarking (RFC 2544), 131,072 addresses.
    static let defaultRange = "198.18.0.0/15"

    let base: UInt32
    let size: UInt64
    private var used: Set<UInt32> = []
    private var cursor: UInt64 = 0

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

    /// The next free address of the range, or nil when every one is taken.
    mutating func allocate() -> String? {
        guard UInt64(used.count) < size else { return nil }
        for _ in 0..<size {
            let candidate = base &+ UInt32(truncatingIfNeeded: cursor % size)
            cursor += 1
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
