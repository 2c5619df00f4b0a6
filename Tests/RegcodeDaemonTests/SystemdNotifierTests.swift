import Foundation
import Testing

@testable import RegcodeDaemon

#if canImport(Glibc)
import Glibc
#endif

@Suite(.timeLimit(.minutes(1))) struct SystemdNotifierTests {
    /// A bound datagram socket that nobody reads: a listener that stopped reading.
    private func deafListener(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }

    /// The benchmark's listener read only up to READY=1; once its queue was full every STATUS= blocked a
    /// thread that runs devices, and a fleet of 10,000 stopped for minutes.
    @Test func aListenerThatStoppedReadingNeverBlocksTheSender() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        let fd = try deafListener(path)
        defer {
            close(fd)
            unlink(path)
        }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        var sent = 0
        // Far more than the queue holds (net.unix.max_dgram_qlen, 512 by default).
        for index in 0..<5_000 where notifier.notify("STATUS=update \(index)") { sent += 1 }
        #expect(sent > 0)
        #expect(sent < 5_000)
    }
}
