#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Creating, probing and removing the socket file of a listening Unix stream socket, with plain POSIX calls:
/// NIO's own `bind(unixDomainSocketPath:)` can neither set the mode before the file appears nor tell a stale file
/// from a live daemon.
enum UnixSocketFile {
    /// Device and inode of a socket file we created, so shutdown never removes a file someone else put there since.
    struct Identity: Sendable, Hashable {
        var device: UInt64
        var inode: UInt64
    }

    enum Probe: Equatable {
        case absent
        case notASocket
        /// A process accepted (or queued) our connection.
        case live
        /// Nothing listens behind the file: the daemon that created it died without removing it.
        case stale
        case unknown(errno: CInt)
    }

    /// Creates a listening socket at `path` with `mode` (and `group`, when given), replacing a stale socket file.
    static func createListener(
        path: String,
        mode: mode_t,
        group: gid_t?,
        backlog: CInt
    ) throws(ControlServerError) -> (fd: CInt, identity: Identity, replacedStale: Bool) {
        guard self.fitsSocketAddress(path) else { throw .pathTooLong(path) }
        var replacedStale = false
        switch self.probe(path: path) {
        case .absent: break
        case .notASocket: throw .notASocket(path)
        case .live: throw .socketInUse(path)
        case .stale:
            // Another daemon may be doing the same right now; whoever binds second gets EADDRINUSE below.
            if unlink(path) != 0 && errno != ENOENT {
                throw .socketSetupFailed(path: path, operation: "unlink stale socket", errno: errno)
            }
            replacedStale = true
        case .unknown(let code):
            throw .socketSetupFailed(path: path, operation: "probe existing socket", errno: code)
        }

        let fd = try self.makeSocket(path: path, nonBlocking: false)
        var succeeded = false
        defer { if !succeeded { close(fd) } }

        // On Linux the file bind() creates takes the socket inode's mode (minus the umask): setting it first means the
        // file never exists with wider permissions than asked for. Elsewhere this is a harmless no-op.
        _ = fchmod(fd, mode)
        let bound = self.withAddress(path) { address, length in bind(fd, address, length) }
        if bound != 0 {
            let code = errno
            if code == EADDRINUSE { throw .socketInUse(path) }
            throw .socketSetupFailed(path: path, operation: "bind", errno: code)
        }
        var created = false
        defer { if !succeeded && created { unlink(path) } }
        created = true
        // The umask may have removed bits; set the exact mode on the file itself.
        if chmod(path, mode) != 0 {
            throw .socketSetupFailed(path: path, operation: "chmod", errno: errno)
        }
        if let group, chown(path, uid_t.max, group) != 0 {
            throw .socketSetupFailed(path: path, operation: "chown to group \(group)", errno: errno)
        }
        if listen(fd, backlog) != 0 {
            throw .socketSetupFailed(path: path, operation: "listen", errno: errno)
        }
        guard let identity = self.identity(path: path) else {
            throw .socketSetupFailed(path: path, operation: "stat", errno: errno)
        }
        succeeded = true
        return (fd, identity, replacedStale)
    }

    /// Removes `path` if it is still the socket file we created.
    @discardableResult
    static func remove(path: String, ifIdentity identity: Identity) -> Bool {
        guard self.identity(path: path) == identity else { return false }
        return unlink(path) == 0
    }

    /// What is at `path`: nothing, a non-socket, a live or a stale socket.
    static func probe(path: String) -> Probe {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return errno == ENOENT ? .absent : .unknown(errno: errno)
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { return .notASocket }
        let fd: CInt
        do {
            // Non-blocking: a live daemon with a full accept backlog must not hang our start-up.
            fd = try self.makeSocket(path: path, nonBlocking: true)
        } catch {
            return .unknown(errno: EINVAL)
        }
        defer { close(fd) }
        let result = self.withAddress(path) { address, length in connect(fd, address, length) }
        if result == 0 { return .live }
        switch errno {
        case ECONNREFUSED: return .stale
        case EAGAIN, EINPROGRESS: return .live
        case ENOENT: return .absent
        case let code: return .unknown(errno: code)
        }
    }

    /// Checks that an inherited descriptor (socket activation) is a Unix stream socket.
    static func validateInherited(fd: CInt) throws(ControlServerError) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            throw .unsupportedListeningSocket(fd: fd, reason: "not a socket (\(String(cString: strerror(errno))))")
        }
        // SO_PEERCRED does not fail on other address families, so a TCP socket here would silently skip the peer check.
        guard CInt(storage.ss_family) == AF_UNIX else {
            throw .unsupportedListeningSocket(fd: fd, reason: "not a Unix-domain socket")
        }
        var type: CInt = 0
        var typeLength = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0, type == Self.streamType else {
            throw .unsupportedListeningSocket(fd: fd, reason: "not a stream socket")
        }
    }

    static func identity(path: String) -> Identity? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    static func fitsSocketAddress(_ path: String) -> Bool {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        return !path.isEmpty && path.utf8.count < capacity
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    #else
    private static let streamType = CInt(SOCK_STREAM.rawValue)
    #endif

    private static func makeSocket(path: String, nonBlocking: Bool) throws(ControlServerError) -> CInt {
        #if canImport(Darwin)
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        guard fd >= 0 else { throw .socketSetupFailed(path: path, operation: "socket", errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        #else
        var type = Self.streamType | CInt(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= CInt(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw .socketSetupFailed(path: path, operation: "socket", errno: errno) }
        #endif
        return fd
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
