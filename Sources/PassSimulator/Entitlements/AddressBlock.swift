/// An IPv4 or IPv6 block in CIDR notation (`192.168.0.0/16`, `fd00::/8`; a bare address is a single host).
///
/// Written by hand: none of the simulator's dependencies parses CIDR notation. IPv4-mapped IPv6 addresses
/// (`::ffff:192.168.1.2`, as a dual-stack listener reports IPv4 peers) match IPv4 blocks.
struct AddressBlock: Sendable, Hashable {
    let bytes: [UInt8]
    let prefix: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let bytes = Self.parse(String(parts[0])) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...bits).contains(prefix) else { return nil }
            self.prefix = prefix
        } else {
            self.prefix = bits
        }
        self.bytes = bytes
    }

    /// Whether `address` (a textual IPv4 or IPv6 address) lies in the block.
    func contains(_ address: String) -> Bool {
        guard let candidate = Self.parse(address), candidate.count == self.bytes.count else { return false }
        var remaining = self.prefix
        for index in 0..<candidate.count where remaining > 0 {
            let take = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if candidate[index] & mask != self.bytes[index] & mask { return false }
            remaining -= take
        }
        return true
    }

    /// 4 bytes for IPv4 (also for an IPv4-mapped IPv6 address), 16 for IPv6, `nil` for anything else.
    static func parse(_ text: String) -> [UInt8]? {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        if !text.contains(":") { return Self.parseIPv4(text) }
        guard let bytes = Self.parseIPv6(text) else { return nil }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for octet in octets {
            guard !octet.isEmpty, octet.count <= 3, octet.allSatisfy(\.isASCIIDigitCharacter), let value = UInt8(octet) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = Self.parseIPv4(piece) else { return nil }
                    bytes += v4
                } else {
                    guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { self.isASCII && self.isNumber }
}
