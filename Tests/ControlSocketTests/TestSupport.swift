import Foundation
import NIOCore
import NIOPosix
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Synchronization
import Testing

@testable import ControlRPC
@testable import ControlSocket

/// A handler with a few methods to exercise the server, plus `subscribe` over a broadcaster and a fake event store.
final class TestHandler: ControlHandler {
    let broadcaster: EventBroadcaster<JSONValue>
    /// Stands in for the database: events replayed to subscribers that pass `since`.
    let store: [JSONValue]
    /// Runs after the live subscription is registered and before the replay is read, like a concurrent publisher.
    let afterRegistration: @Sendable () -> Void
    private let received = Mutex<[String]>([])

    init(
        broadcaster: EventBroadcaster<JSONValue> = EventBroadcaster(),
        store: [JSONValue] = [],
        afterRegistration: @escaping @Sendable () -> Void = {}
    ) {
        self.broadcaster = broadcaster
        self.store = store
        self.afterRegistration = afterRegistration
    }

    /// Methods received so far, notifications included.
    var receivedMethods: [String] {
        self.received.withLock { $0 }
    }

    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
        self.received.withLock { $0.append(method) }
        switch method {
        case "echo":
            return params ?? .null
        case "add":
            guard let a = params?["a"]?.intValue, let b = params?["b"]?.intValue else {
                throw .invalidParams("add needs integer params a and b", data: ["params": params ?? .null])
            }
            return .int(a + b)
        case "whoami":
            guard let peer = peer.credentials else { return ["transport": .string(peer.description)] }
            return ["pid": .int(Int64(peer.pid)), "uid": .int(Int64(peer.uid)), "gid": .int(Int64(peer.gid))]
        case "slow":
            let milliseconds = params?["ms"]?.intValue ?? 100
            try? await Task.sleep(for: .milliseconds(milliseconds))
            return params?["tag"] ?? .null
        default:
            throw .methodNotFound(method)
        }
    }

    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        self.received.withLock { $0.append("subscribe") }
        let since = params?["since"]?.intValue
        if let value = params?["since"], since == nil {
            throw .invalidParams("since must be an integer", data: ["since": value])
        }
        let live = self.broadcaster.subscribe()
        self.afterRegistration()
        let stored = self.store.filter { ($0["seq"]?.intValue ?? 0) > (since ?? 0) }
        let replay = AsyncStream<JSONValue> { continuation in
            for event in stored { continuation.yield(event) }
            continuation.finish()
        }
        return Subscription(result: ["subscribed": true], live: live, replay: replay, since: since)
    }
}

/// An event as the daemon would publish it, padded so that a few thousand of them overflow socket buffers.
func testEvent(_ seq: Int64, padding: Int = 0) -> JSONValue {
    var args: [String: JSONValue] = ["status": 1, "errorCode": ""]
    if padding > 0 { args["padding"] = .string(String(repeating: "x", count: padding)) }
    return ["seq": .int(seq), "device": "stb-1", "name": "setAuthenticationStatus", "args": .object(args)]
}

/// Runs `body` with a fresh directory under /tmp (short enough for socket paths), removed afterwards.
func withTemporaryDirectory<Result>(_ body: (String) async throws -> Result) async throws -> Result {
    var template = Array("/tmp/regcoded-test-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    let path = String(cString: created)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

struct ServerDidNotStart: Error {}

/// Runs a control server on a socket in a temporary directory around `body`, then shuts it down gracefully and
/// waits for `run()` to return.
func withServer(
    handler: some ControlHandler = TestHandler(),
    configure: (inout ControlServer.Configuration) -> Void = { _ in },
    _ body: (ControlServer, String) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let path = directory + "/control.sock"
        var configuration = ControlServer.Configuration(listener: .path(path))
        configure(&configuration)
        try await withServer(configuration: configuration, handler: handler) { server in
            try await body(server, path)
        }
    }
}

func withServer(
    configuration: ControlServer.Configuration,
    handler: some ControlHandler,
    _ body: (ControlServer) async throws -> Void
) async throws {
    let (listening, listeningContinuation) = AsyncStream<Void>.makeStream()
    let server = ControlServer(configuration: configuration, handler: handler) {
        listeningContinuation.yield()
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            // Ends the stream if run() fails before listening, so the wait below cannot hang.
            defer { listeningContinuation.finish() }
            try await server.run()
        }
        var iterator = listening.makeAsyncIterator()
        guard await iterator.next() != nil else {
            try await group.waitForAll()
            throw ServerDidNotStart()
        }
        do {
            try await body(server)
        } catch {
            server.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
        server.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A line-level client that sees exactly the bytes the server writes.
struct RawConnection {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    var pending = ByteBuffer()

    func send(_ text: String) async throws {
        try await self.outbound.write(ByteBuffer(string: text))
    }

    func send(bytes count: Int, of byte: UInt8) async throws {
        var remaining = count
        while remaining > 0 {
            let chunk = min(remaining, 64 * 1024)
            try await self.outbound.write(ByteBuffer(repeating: byte, count: chunk))
            remaining -= chunk
        }
    }

    /// The next line without its newline; nil at end of stream.
    mutating func readLine() async throws -> String? {
        while true {
            if let newline = self.pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                let length = newline - self.pending.readerIndex
                let line = self.pending.readString(length: length)!
                self.pending.moveReaderIndex(forwardBy: 1)
                return line
            }
            guard var more = try await self.inbound.next() else { return nil }
            self.pending.writeBuffer(&more)
        }
    }

    /// The next line, decoded.
    mutating func readJSON() async throws -> JSONValue? {
        guard let line = try await self.readLine() else { return nil }
        return try JSONValueParser.parse(line.utf8, numbers: .integralAsInt)
    }
}

func withRawConnection<Result: Sendable>(to path: String, _ body: (inout RawConnection) async throws -> Result) async throws -> Result {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(unixDomainSocketPath: path) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        var connection = RawConnection(outbound: outbound, inbound: inbound.makeAsyncIterator())
        return try await body(&connection)
    }
}

/// A plain POSIX client socket, for a peer that connects, writes, and then never reads. Close it when done.
struct PosixClientSocket {
    let fd: CInt

    init(connectingTo path: String) throws {
        self.fd = try LoopbackConnect.unix(path: path)
    }

    func close() {
        Glibc.close(self.fd)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Reads everything until the peer closes, polling without blocking a thread; nil if it does not close in time.
    func readUntilClosed(timeout: Duration) async throws -> [UInt8]? {
        _ = fcntl(self.fd, F_SETFL, fcntl(self.fd, F_GETFL) | O_NONBLOCK)
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(self.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 || errno == ECONNRESET {
                // A Unix socket closed with requests of ours still unread reports a reset instead of end-of-file.
                return received
            } else if errno == EAGAIN {
                if ContinuousClock.now >= deadline { return nil }
                try await Task.sleep(for: .milliseconds(10))
            } else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
        }
    }
}

/// Leaves a socket file behind with nothing listening on it, as a killed daemon would.
func makeStaleSocketFile(at path: String) throws {
    let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    try bindAndListen(fd, path: path)
}

func bindAndListen(_ fd: CInt, path: String) throws {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
}

func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode
}
