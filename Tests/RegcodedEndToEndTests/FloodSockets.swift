import Foundation
import RegcodeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Many plain client sockets held open by a test, to a TCP port on loopback or a Unix socket path: the floods of the
/// listener tests. Closed when the value goes away.
final class FloodSockets: @unchecked Sendable {
    private(set) var descriptors: [Int32] = []

    /// Opens up to `count` connections to `127.0.0.1:port`; stops at the first that fails. Returns how many opened.
    @discardableResult
    func connect(tcpPort port: Int, count: Int) -> Int {
        var opened = 0
        for _ in 0..<count {
            guard let fd = try? LoopbackConnect.tcp(port: port) else { break }
            self.descriptors.append(fd)
            opened += 1
        }
        return opened
    }

    /// Opens up to `count` connections to the Unix socket at `path`; stops at the first that fails.
    @discardableResult
    func connect(unixPath path: String, count: Int) -> Int {
        var opened = 0
        for _ in 0..<count {
            guard let fd = try? LoopbackConnect.unix(path: path) else { break }
            self.descriptors.append(fd)
            opened += 1
        }
        return opened
    }

    /// Sends `text` on every socket from index `range` (a half-sent request or line).
    func send(_ text: String, to range: Range<Int>) {
        let bytes = Array(text.utf8)
        for fd in self.descriptors[range] {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// How many of the sockets in `range` the server has closed (end of stream or reset; bytes it sent are skipped).
    func closedByServer(_ range: Range<Int>? = nil) -> Int {
        var closed = 0
        var scratch = [UInt8](repeating: 0, count: 4096)
        for fd in self.descriptors[range ?? 0..<self.descriptors.count] {
            while true {
                let count = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
                if count > 0 { continue }
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { closed += 1 }
                break
            }
        }
        return closed
    }

    /// Waits (polling, bounded by `timeout`) until at least `expected` sockets in `range` are closed; returns how many are.
    func waitUntilClosed(_ expected: Int, in range: Range<Int>? = nil, timeout: Duration = .seconds(30)) async -> Int {
        let deadline = ContinuousClock.now + timeout
        var closed = self.closedByServer(range)
        while closed < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
            closed = self.closedByServer(range)
        }
        return closed
    }

    var count: Int { self.descriptors.count }

    func closeAll() {
        for fd in self.descriptors { close(fd) }
        self.descriptors = []
    }

    deinit { self.closeAll() }
}

/// The TCP port printed after `marker` (`console: http://127.0.0.1:`), if any.
func port(after marker: String, in text: String) -> Int? {
    guard let range = text.range(of: marker) else { return nil }
    return Int(text[range.upperBound...].prefix { $0.isNumber })
}
