#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who is calling: a process on the Unix socket, or an HTTP client of the daemon's listener.
package enum ControlPeer: Sendable, Hashable, CustomStringConvertible {
    /// A local process, with the credentials the kernel reported at `connect()` time.
    case unixSocket(PeerCredentials)
    /// An HTTP client, by its remote address (already authorised by the listener's token rule).
    case http(remoteAddress: String)

    /// The kernel-reported credentials of a socket peer; nil over HTTP.
    package var credentials: PeerCredentials? {
        if case .unixSocket(let credentials) = self { return credentials }
        return nil
    }

    package var description: String {
        switch self {
        case .unixSocket(let credentials): "socket \(credentials)"
        case .http(let address): "http \(address)"
        }
    }
}

/// Who is on the other end of a control connection, as the kernel reports it at `connect()` time.
package struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id (0 where the platform does not report it).
    package var pid: pid_t
    package var uid: uid_t
    /// The peer's primary group id.
    package var gid: gid_t

    package init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    package var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
