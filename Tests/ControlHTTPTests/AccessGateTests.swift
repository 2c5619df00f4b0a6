import ControlRPC
import Hummingbird
import HummingbirdTesting
import ListenerGuard
import Logging
import NIOCore
import Testing

@testable import ControlHTTP

/// No token, no body: a request without the token is answered and its connection closed once its head is read, and
/// nothing unauthenticated holds the listener past its read timeout.
@Suite(.timeLimit(.minutes(2))) struct AccessGateTests {
    static let token = "s3cr3t-token-0123456789"

    /// Runs the listener as the daemon does, with the token, for the time of `body`.
    static func withServer(
        _ handler: FakeControlHandler,
        cap: Int = 64,
        readTimeout: Duration = .seconds(60),
        _ body: (HTTPControlServer, Int) async throws -> Void
    ) async throws {
        var configuration = HTTPControlServer.Configuration(host: "127.0.0.1", port: 0, token: Self.token)
        configuration.limits = ListenerLimits(maxConnections: cap, idleTimeout: .seconds(600), readTimeout: readTimeout)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let server = HTTPControlServer(configuration: configuration, handler: handler, logger: Logger(label: "test")) { port in
            listening.yield(port)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body(server, port)
            group.cancelAll()
        }
    }

    /// Waits (bounded: 20 s) until the listener holds `open` connections; what it then holds.
    static func settle(_ server: HTTPControlServer, open: Int) async throws -> Int {
        for _ in 0..<2000 where server.listenerGuard.counters.snapshot.open != open {
            try await Task.sleep(for: .milliseconds(10))
        }
        return server.listenerGuard.counters.snapshot.open
    }

    /// Heads without a token, each announcing a body of which only a little is sent before the answer.
    static let unauthenticatedHeads: [String] = [
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{\"jsonrpc\"",
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1\r\n\"\r\n",
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n{",
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong-token-0123456789\r\nContent-Length: 100000\r\n\r\n{",
    ]

    @Test(arguments: unauthenticatedHeads.indices)
    func aRequestWithoutTheTokenIsAnswered401AndClosedBeforeItsBody(shape: Int) async throws {
        let handler = FakeControlHandler()
        try await Self.withServer(handler) { server, port in
            try await RawHTTP.withConnection(port: port) { connection in
                try await connection.send(Self.unauthenticatedHeads[shape])
                // The rest of the body is never sent: the answer and the close cannot have waited for it.
                let response = try await connection.readUntilClosed()
                #expect(response.hasPrefix("HTTP/1.1 401"))
                #expect(response.lowercased().contains("connection: close"))
                #expect(response.hasSuffix("\r\n\r\n"))
                // Closed in full on the server's side while this side stays open, not half-closed and waiting.
                #expect(try await Self.settle(server, open: 0) == 0)
            }
            #expect(server.listenerGuard.counters.snapshot.timedOut == 0)
        }
        #expect(handler.calls.isEmpty)
    }

    @Test func aSlowBodyWithTheTokenEndsAtTheReadTimeout() async throws {
        let handler = FakeControlHandler()
        try await Self.withServer(handler, readTimeout: .seconds(1)) { server, port in
            try await RawHTTP.withConnection(port: port) { connection in
                try await connection.send(
                    "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(Self.token)\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 100000\r\n\r\n{"
                )
                // A byte every 100 ms keeps the connection busy, never idle, and never finishes the body.
                let trickle = Task {
                    for _ in 0..<600 {
                        try await Task.sleep(for: .milliseconds(100))
                        try await connection.send(" ")
                    }
                }
                _ = try await connection.readUntilClosed()
                trickle.cancel()
            }
            #expect(try await Self.settle(server, open: 0) == 0)
            #expect(server.listenerGuard.counters.snapshot.timedOut == 1)
        }
        #expect(handler.calls.isEmpty)
    }

    @Test func anAnsweredRequestWithConnectionCloseIsClosedInFullWhileItsBodyStillArrives() async throws {
        let handler = FakeControlHandler()
        try await Self.withServer(handler) { server, port in
            try await RawHTTP.withConnection(port: port) { connection in
                // The console page reads no body: it is answered at once, and the body still coming is not waited for.
                try await connection.send(
                    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: 100000\r\nConnection: close\r\n\r\nx"
                )
                let response = try await connection.readUntilClosed()
                #expect(response.hasPrefix("HTTP/1.1 200"))
                #expect(try await Self.settle(server, open: 0) == 0)
            }
            #expect(server.listenerGuard.counters.snapshot.timedOut == 0)
        }
    }

    @Test func connectionsThatNeverSendAHeadLeaveTheCapWithinTheReadTimeout() async throws {
        let handler = FakeControlHandler()
        try await Self.withServer(handler, cap: 4, readTimeout: .seconds(1)) { server, port in
            let call = #"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}"#
            let request =
                "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(Self.token)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(call.utf8.count)\r\nConnection: close\r\n\r\n\(call)"
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Four silent connections fill the cap; one half-sends a head.
                for index in 0..<4 {
                    group.addTask {
                        try await RawHTTP.withConnection(port: port) { connection in
                            if index == 0 { try await connection.send("POST /rpc HTTP/1.1\r\nHost: 12") }
                            _ = try await connection.readUntilClosed()
                        }
                    }
                }
                #expect(try await Self.settle(server, open: 4) == 4)
                // The token holder is refused while they hold the cap, and let in once the read timeout has closed
                // them (bounded: 100 tries, 100 ms apart).
                var answer = ""
                for _ in 0..<100 {
                    answer = (try? await RawHTTP.exchange(request, port: port)) ?? ""
                    if answer.hasPrefix("HTTP/1.1 200") { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(answer.hasPrefix("HTTP/1.1 200"))
                if answer.hasPrefix("HTTP/1.1 200") { try await group.waitForAll() } else { group.cancelAll() }
            }
            #expect(server.listenerGuard.counters.snapshot.timedOut == 4)
            #expect(server.listenerGuard.counters.snapshot.refused >= 1)
        }
        #expect(handler.calls == ["echo"])
    }
}
