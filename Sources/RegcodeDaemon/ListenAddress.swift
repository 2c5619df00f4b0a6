import RegcodeSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP addresses the daemon listens on (`--http`, `--metrics`, `--simulator-listen`), checked before it creates
/// any file: whether one reaches only this host, and whether one is free.
enum ListenAddress {
    /// One address a host name resolved to.
    enum Resolved: Equatable, Sendable {
        case v4(UInt8, UInt8, UInt8, UInt8)
        case v6([UInt8])

        /// 127.0.0.0/8, `::1` and IPv4-mapped 127.0.0.0/8.
        var isLoopback: Bool {
            switch self {
            case .v4(let first, _, _, _): return first == 127
            case .v6(let bytes):
                guard bytes.count == 16 else { return false }
                if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
                let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                return mapped && bytes[12] == 127
            }
        }
    }

    /// Whether every address `host` resolves to is a loopback address (and it resolves to at least one). What the
    /// name looks like counts for nothing: `127.0.0.1.example.com` is a name anyone can point anywhere.
    static func isLoopback(host: String) -> Bool {
        isLoopback(resolve(host: host))
    }

    /// Whether `addresses` is not empty and each is a loopback address.
    static func isLoopback(_ addresses: [Resolved]) -> Bool {
        !addresses.isEmpty && addresses.allSatisfy(\.isLoopback)
    }

    /// The addresses `host` resolves to for a TCP listener, in the resolver's order; none when it does not resolve.
    static func resolve(host: String) -> [Resolved] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [Resolved] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let resolved = Self.resolved(entry.pointee) { addresses.append(resolved) }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    private static func resolved(_ entry: addrinfo) -> Resolved? {
        guard let address = entry.ai_addr else { return nil }
        switch entry.ai_family {
        case AF_INET:
            let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            let bytes = withUnsafeBytes(of: ipv4) { Array($0) }  // network order
            return .v4(bytes[0], bytes[1], bytes[2], bytes[3])
        case AF_INET6:
            let ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            return .v6(withUnsafeBytes(of: ipv6) { Array($0) })
        default:
            return nil
        }
    }

    /// Every listener of `configuration` with a fixed port: its key, flag and address.
    static func listeners(_ configuration: DaemonConfiguration) -> [(key: String, flag: String, address: HostPort)] {
        var listeners: [(key: String, flag: String, address: HostPort)] = []
        if configuration.usesEmbeddedSimulator {
            let address = HostPort(host: configuration.simulatorHost, port: configuration.simulatorPort)
            listeners.append(("simulator.listen", "--simulator-listen", address))
        }
        if let http = configuration.http.flatMap(HostPort.parse) { listeners.append(("http", "--http", http)) }
        if let metrics = configuration.metrics.flatMap(HostPort.parse) { listeners.append(("metrics", "--metrics", metrics)) }
        return listeners.filter { $0.address.port != 0 }
    }

    /// Binds (and closes at once) a socket on each listener's address, as the listener will, so a busy or unusable
    /// address is named with its flag before the database, the simulator's files or the lock exist.
    /// - Throws: ``ConfigurationError`` naming the key, the flag and the address.
    static func checkAvailable(_ configuration: DaemonConfiguration) throws(ConfigurationError) {
        for listener in listeners(configuration) {
            let (host, port) = (listener.address.host, listener.address.port)
            let shown = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            // The listener binds the first address the name resolves to (NIO's rule), so that is the one checked.
            guard let address = resolve(host: listener.address.host).first else {
                throw ConfigurationError(
                    file: configuration.configFile,
                    key: "\(listener.key) (\(listener.flag))",
                    reason: "\(shown): \(listener.address.host) does not resolve to an address"
                )
            }
            if let code = bindProblem(address, port: listener.address.port) {
                let what = code == EADDRINUSE ? "is already in use (another process listens on it)" : "cannot be bound"
                throw ConfigurationError(
                    file: configuration.configFile,
                    key: "\(listener.key) (\(listener.flag))",
                    reason: "\(shown) \(what): \(String(cString: strerror(code)))"
                )
            }
        }
    }

    /// The errno of binding a TCP socket to `address`:`port` with `SO_REUSEADDR` (as the listeners do), or nil.
    static func bindProblem(_ address: Resolved, port: Int) -> Int32? {
        let family = if case .v4 = address { AF_INET } else { AF_INET6 }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        switch address {
        case .v4(let a, let b, let c, let d):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: [a, b, c, d]) }
            result = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(let bytes):
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: bytes) }
            result = withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        return result == 0 ? nil : errno
    }
}
