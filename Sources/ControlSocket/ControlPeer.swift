/// Who is calling: a process on the Unix socket, or an HTTP client of the daemon's listener.
public enum ControlPeer: Sendable, Hashable, CustomStringConvertible {
    /// A local process, with the credentials the kernel reported at `connect()` time.
    case unixSocket(PeerCredentials)
    /// An HTTP client, by its remote address (already authorised by the listener's token rule).
    case http(remoteAddress: String)

    /// The kernel-reported credentials of a socket peer; nil over HTTP.
    public var credentials: PeerCredentials? {
        if case .unixSocket(let credentials) = self { return credentials }
        return nil
    }

    public var description: String {
        switch self {
        case .unixSocket(let credentials): "socket \(credentials)"
        case .http(let address): "http \(address)"
        }
    }
}
