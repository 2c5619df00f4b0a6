import RegcodeEngine

/// A fleet's `client_address:` as configured: the mode and the addresses its devices take their own from.
package struct ClientAddressConfiguration: Sendable, Equatable {
    /// nil: `bind` when the backend is on loopback (the embedded simulator, a local pass-sim), else `host`.
    package var mode: ClientAddressMode?
    /// CIDR ranges and single addresses for `bind` and `forwarded-for` (`addresses:`); nil: the daemon's
    /// `client_addresses`, else the mode's default (``ClientAddressPool/loopbackRange``,
    /// ``ClientAddressPool/forwardedForRange``).
    package var addresses: String?

    package init(mode: ClientAddressMode? = nil, addresses: String? = nil) {
        self.mode = mode
        self.addresses = addresses
    }
}
