#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// Who is on the other end of a control connection, as the kernel reports it at `connect()` time.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id (0 where the platform does not report it).
    public var pid: pid_t
    public var uid: uid_t
    /// The peer's primary group id.
    public var gid: gid_t

    public init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
