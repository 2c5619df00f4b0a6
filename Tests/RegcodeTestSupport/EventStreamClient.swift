import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain loopback TCP client for `GET /events`: many of them stream at once (the test client has one connection),
/// and one can connect, ask, and never read.
package final class EventStreamClient: @unchecked Sendable {
    package let fd: CInt
    package private(set) var received: [UInt8] = []

    /// - Parameter receiveBuffer: A small kernel receive buffer, so a client that never reads stalls the server soon.
    package init(port: Int, receiveBuffer: Int? = nil) throws {
        let fd = try LoopbackConnect.tcp(port: port, receiveBuffer: receiveBuffer)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    /// Closes the socket once; later calls do nothing (a second `close` could close a descriptor the process reused).
    package func close() {
        guard !self.closed else { return }
        self.closed = true
        Glibc.close(self.fd)
    }

    private var closed = false

    /// Sends `GET path` as an `EventSource` does, with `headers` besides.
    package func get(_ path: String, headers: [String: String] = [:]) throws {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        let bytes = Array((request + "\r\n").utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// What arrived so far, as text (chunked framing included: a chunk holds whole events).
    package var text: String { String(decoding: self.received, as: UTF8.self) }

    /// The `id:` of every event received so far, in order.
    ///
    /// Parsed as bytes, line by line, and only once per line: `String` treats `\r\n` (the chunked framing's line end)
    /// as one character, and a stream of many megabytes re-read after every chunk made reading quadratic.
    package var eventIDs: [Int64] {
        let prefix = Array("id: ".utf8)
        while let newline = self.received[self.scanned...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = self.received[self.scanned..<newline]
            self.scanned = newline + 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard line.starts(with: prefix), let id = Int64(String(decoding: line.dropFirst(prefix.count), as: UTF8.self)) else {
                continue
            }
            self.parsedIDs.append(id)
        }
        return self.parsedIDs
    }

    private var scanned = 0
    private var parsedIDs: [Int64] = []

    /// Reads until `done` holds or the server closes the connection; false if neither happened within `attempts`
    /// waits of 10 ms with nothing to read.
    package func read(attempts: Int = 3000, until done: (EventStreamClient) -> Bool) async throws -> Bool {
        var idle = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while !done(self) {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(self.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                self.received += chunk[..<count]
                idle = 0
            } else if count == 0 || errno == ECONNRESET {
                return true
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                idle += 1
                if idle >= attempts { return false }
                try await Task.sleep(for: .milliseconds(10))
            } else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
        }
        return true
    }

    /// Reads everything until the server closes the connection; false if it did not within `attempts` idle waits.
    package func readUntilClosed(attempts: Int = 3000) async throws -> Bool {
        try await self.read(attempts: attempts) { _ in false }
    }
}
