/// How a device's calls reach the backend over TCP (a fleet setting; `connections:` in the configuration).
///
/// Real set-top boxes each hold their own keep-alive connection; a pool shared by thousands of emulated
/// devices shows a backend far fewer connections, handshakes and idle sockets than production will.
package enum ConnectionModel: Sendable, Hashable, Codable {
    /// Keep-alive connections shared by the devices naming the same `pool`, at most `connections` of them.
    case shared(pool: String, connections: Int)
    /// One keep-alive connection per device, as a box holds it.
    case perDevice
    /// A new connection for every call, closed after its answer (`Connection: close`).
    case perRequest
}
