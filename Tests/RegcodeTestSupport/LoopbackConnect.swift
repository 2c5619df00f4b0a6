import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The blocking connect of the raw-protocol test clients: to `127.0.0.1:port` or to a Unix socket path. Each returns
/// the connected descriptor, which the caller closes, or the failure's errno (the descriptor closed).
package enum LoopbackConnect {
    /// - Parameter receiveBuffer: `SO_RCVBUF`, set before connecting (a client that never reads then stalls the
    ///   server soon).
    package static func tcp(port: Int, receiveBuffer: Int? = nil) throws(POSIXError) -> CInt {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return try connect(family: AF_INET, to: &address) { fd in
            if var size = receiveBuffer.map(CInt.init) {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
            }
        }
    }

    package static func unix(path: String) throws(POSIXError) -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path.utf8.prefix(raw.count - 1)) }
        return try connect(family: AF_UNIX, to: &address)
    }

    private static func connect<Address>(
        family: CInt,
        to address: inout Address,
        prepare: (CInt) -> Void = { _ in }
    ) throws(POSIXError) -> CInt {
        let fd = socket(family, CInt(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        prepare(fd)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        return fd
    }
}
