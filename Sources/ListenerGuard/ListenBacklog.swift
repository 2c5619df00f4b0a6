#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `listen()` backlog every listener asks for: the system's own maximum, so a burst of clients connecting at
/// once waits in the kernel instead of being refused.
package enum ListenBacklog {
    /// `net.core.somaxconn` on Linux (the kernel caps any backlog at it), else the `SOMAXCONN` constant, which older C
    /// libraries still define as 128.
    package static let system: Int32 = {
        if let text = readSmallFile("/proc/sys/net/core/somaxconn"),
            let value = Int32(text.filter { !$0.isWhitespace }), value > 0
        {
            return value
        }
        return Int32(SOMAXCONN)
    }()

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}
