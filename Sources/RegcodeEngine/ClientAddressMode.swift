/// Which address the backend sees a device's calls come from (a fleet setting; `client_address:` in the
/// configuration).
package enum ClientAddressMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// No header: every call comes from the host's own address, as boxes behind one NAT do.
    case host
    /// Each device's connections are bound to its own local source address (``DeviceSettings/clientAddress``):
    /// real packets from distinct addresses.
    case bind
    /// Each call carries `X-Forwarded-For` with the device's address: the server-to-server case Adobe documents,
    /// for a proxy that calls the backend on the devices' behalf.
    case forwardedFor = "forwarded-for"
}
