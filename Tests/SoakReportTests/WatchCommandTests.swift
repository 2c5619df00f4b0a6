import Foundation
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `regcodectl watch` with its output in a file, against a small fake control socket that answers
/// `subscribe` and then sends events one at a time.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct WatchCommandTests {
    static let first =
        #"{"jsonrpc":"2.0","method":"event","params":{"seq":1,"time":"2026-11-21T10:00:00.012Z","device":"stb-1","name":"setRequestorComplete","args":{"status":1}}}"#
    static let second =
        #"{"jsonrpc":"2.0","method":"event","params":{"seq":2,"time":"2026-11-21T10:00:00.013Z","device":"stb-1","name":"setAuthenticationStatus","args":{"errorCode":"User Not Authenticated Error","status":0}}}"#

    @Test(arguments: [false, true])
    func eachEventLineReachesAFileBeforeTheNextEventAndBeforeExit(json: Bool) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("watch-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }

        let command = try RunningCommand(
            BuiltProducts.url("regcodectl"),
            ["watch", "--socket", socketPath, "--count", "2"] + (json ? ["--json"] : []),
            in: directory
        )
        defer { command.stop() }

        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
        #expect(request?["method"] as? String == "subscribe")
        let id = try #require(request?["id"] as? Int)
        try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":{"lastSeq":0}}"# + "\n")

        try connection.write(Self.first + "\n")
        let firstLine = try #require(
            command.waitForLines(1, timeout: 10),
            "the first event's line did not reach the file while regcodectl was running; stderr: \(command.stderr)"
        )
        #expect(command.process.isRunning, "the line arrived before exit")
        if json {
            #expect(firstLine.first?.contains(#""seq":1"#) == true)
        } else {
            #expect(firstLine == ["#1 10:00:00.012Z stb-1 setRequestorComplete status=1"])
        }

        try connection.write(Self.second + "\n")
        #expect(command.waitForExit(timeout: 10), "regcodectl did not stop after --count events")
        #expect(command.process.terminationStatus == 0, "\(command.stderr)")
        let lines = command.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        if !json {
            #expect(lines.last == #"#2 10:00:00.013Z stb-1 setAuthenticationStatus status=0 "User Not Authenticated Error""#)
        }
    }

    /// Through a pipe (as to `jq`), the first line can be read while regcodectl still waits for more
    /// events; a time with an offset is shown in UTC.
    @Test func theFirstLineCanBeReadFromAPipeWhileTheCommandRuns() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("watch-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }

        let process = Process()
        let pipe = Pipe()
        process.executableURL = BuiltProducts.url("regcodectl")
        process.arguments = ["watch", "--socket", socketPath, "--count", "2"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        try pipe.fileHandleForWriting.close()

        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
        let id = try #require(request?["id"] as? Int)
        try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":{"lastSeq":0}}"# + "\n")
        try connection.write(
            #"{"jsonrpc":"2.0","method":"event","params":{"seq":1,"time":"2026-11-21T11:00:00.012+01:00","device":"stb-1","name":"setRequestorComplete","args":{"status":1}}}"#
                + "\n"
        )
        let reader = FakeControlSocket.Connection(fd: dup(pipe.fileHandleForReading.fileDescriptor))
        defer { reader.close() }
        let line = try reader.readLine(timeout: 10)
        #expect(line == "#1 10:00:00.012Z stb-1 setRequestorComplete status=1")
        #expect(process.isRunning, "the line was read while regcodectl still waited for its second event")
    }

    /// An app other than a plain device's `main` is named after the device; `main` stays implicit.
    @Test func anAppOtherThanMainIsShownAfterTheDevice() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("watch-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }

        let command = try RunningCommand(BuiltProducts.url("regcodectl"), ["watch", "--socket", socketPath, "--count", "3"], in: directory)
        defer { command.stop() }
        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
        let id = try #require(request?["id"] as? Int)
        try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":{"lastSeq":0}}"# + "\n")
        for (seq, app) in [(1, #","app":"main""#), (2, #","app":"B""#), (3, "")] {
            try connection.write(
                #"{"jsonrpc":"2.0","method":"event","params":{"seq":\#(seq),"time":"2026-11-21T10:00:00.012Z","device":"sso-1"\#(app),"name":"setRequestorComplete","args":{"status":1}}}"#
                    + "\n"
            )
        }
        #expect(command.waitForExit(timeout: 10), "regcodectl did not stop after --count events")
        #expect(command.process.terminationStatus == 0, "\(command.stderr)")
        #expect(
            command.stdout.split(separator: "\n").map(String.init) == [
                "#1 10:00:00.012Z sso-1 setRequestorComplete status=1",
                "#2 10:00:00.012Z sso-1/B setRequestorComplete status=1",
                "#3 10:00:00.012Z sso-1 setRequestorComplete status=1",
            ]
        )
    }
}

/// A started program whose output goes to files in a directory, read while it runs.
final class RunningCommand {
    let process = Process()
    private let outURL: URL
    private let errURL: URL
    private let out: FileHandle
    private let err: FileHandle

    init(_ executable: URL, _ arguments: [String], in directory: URL) throws {
        outURL = directory.appendingPathComponent("stdout")
        errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        out = try FileHandle(forWritingTo: outURL)
        err = try FileHandle(forWritingTo: errURL)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// The complete lines written so far once there are at least `count`, or `nil` after `timeout` seconds.
    func waitForLines(_ count: Int, timeout: Double) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            if lines.count >= count { return lines }
            usleep(20_000)
        }
        return nil
    }

    /// Whether the program exited within `timeout` seconds.
    func waitForExit(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { return false }
        process.waitUntilExit()
        return true
    }

    /// Ends the program if it still runs, and closes the output files.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? out.close()
        try? err.close()
    }
}

// The socket class has `close()` and `accept(timeout:)` methods, which hide the C functions.
private func systemClose(_ fd: Int32) { _ = close(fd) }
private func systemAccept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }

/// Why the fake control socket failed.
struct FakeSocketError: Error, CustomStringConvertible {
    var description: String
}

/// A listening Unix stream socket speaking just enough of the control protocol (one JSON object per
/// line) for `regcodectl watch`; blocking calls bounded by `poll` timeouts.
final class FakeControlSocket {
    private var fd: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Self.streamType, 0)
        guard fd >= 0 else { throw FakeSocketError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw FakeSocketError(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            let reason = String(cString: strerror(errno))
            systemClose(fd)
            throw FakeSocketError(description: "bind/listen \(path): \(reason)")
        }
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif

    func accept(timeout: Double) throws -> Connection {
        try Self.waitReadable(fd, timeout: timeout, what: "a connection")
        let client = systemAccept(fd)
        guard client >= 0 else { throw FakeSocketError(description: "accept: \(String(cString: strerror(errno)))") }
        return Connection(fd: client)
    }

    func close() {
        if fd >= 0 {
            systemClose(fd)
            fd = -1
        }
        unlink(path)
    }

    /// Binds a socket at `path` and closes it without removing the file: what a crashed daemon leaves.
    static func leaveStaleSocketFile(at path: String) throws {
        let socket = try FakeControlSocket(path: path)
        systemClose(socket.fd)
        socket.fd = -1
    }

    static func waitReadable(_ fd: Int32, timeout: Double, what: String) throws {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        guard ready > 0 else { throw FakeSocketError(description: "no \(what) within \(timeout) s") }
    }

    /// One accepted connection (or any other readable descriptor, such as a pipe).
    final class Connection {
        private var fd: Int32
        private var buffer: [UInt8] = []

        init(fd: Int32) {
            self.fd = fd
        }

        /// The next line, without its newline.
        func readLine(timeout: Double) throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                try FakeControlSocket.waitReadable(fd, timeout: timeout, what: "request line")
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { throw FakeSocketError(description: "the client closed the connection") }
                buffer += chunk[..<count]
            }
        }

        func write(_ text: String) throws {
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { throw FakeSocketError(description: "send: \(String(cString: strerror(errno)))") }
                bytes = bytes.dropFirst(sent)
            }
        }

        func close() {
            if fd >= 0 {
                systemClose(fd)
                fd = -1
            }
        }
    }
}
