/// Home-based authentication of one MVPD: the address blocks that count as the subscriber's home network, and an
/// optional shorter lifetime for profiles obtained from home.
package struct HomeNetwork: Sendable, Hashable, Codable {
    /// Blocks in CIDR notation; a device whose address lies in one is at home.
    package var addresses: [String]
    /// Lifetime in seconds of profiles whose `hba_status` is `true`; `nil`: the usual profile lifetime.
    package var ttl: Int64?

    /// A home network of `addresses`.
    package init(addresses: [String], ttl: Int64? = nil) {
        self.addresses = addresses
        self.ttl = ttl
    }

    private enum CodingKeys: String, CodingKey {
        case addresses, ttl
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.addresses = try container.decode([String].self, forKey: .addresses)
        self.ttl = try container.decodeIfPresent(Int64.self, forKey: .ttl)
        if let bad = self.addresses.first(where: { AddressBlock($0) == nil }) {
            throw DecodingError.dataCorruptedError(forKey: .addresses, in: container, debugDescription: "\(bad) is not an address block (CIDR)")
        }
        if let ttl = self.ttl, ttl <= 0 {
            throw DecodingError.dataCorruptedError(forKey: .ttl, in: container, debugDescription: "ttl must be a positive number of seconds")
        }
    }

    /// Whether a device at `address` is at home; an unknown address is not.
    func contains(_ address: String?) -> Bool {
        guard let address else { return false }
        return self.addresses.contains { AddressBlock($0)?.contains(address) == true }
    }
}
