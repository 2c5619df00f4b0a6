import BackendHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The pool against a real loopback server, on every wire (plain HTTP/1.1, TLS with HTTP/1.1, TLS with HTTP/2):
/// reuse, its bound, deadlines, cancellation and every way a connection ends. Deadlines are short only so that a
/// stalled exchange ends; no test measures time.
@Suite struct KeepAliveConnectionPoolTests {
    /// Trusted by every pool of these tests; its server certificates name 127.0.0.1.
    private static let pki = try! TestPKI()
    private static let tls = try! TLSClientContext(settings: TLSClientSettings(caFile: pki.caFile))

    private func server(_ wire: TestWire) async throws -> ScriptedServer {
        try await ScriptedServer(wire: wire, tls: wire.usesTLS ? Self.pki.server() : nil)
    }

    private func pool(_ server: ScriptedServer, _ wire: TestWire, connections: Int = 4) -> KeepAliveConnectionPool {
        KeepAliveConnectionPool(
            origin: Origin(baseURL: "\(wire.scheme)://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: connections,
            connectTimeout: Self.handshakeBound,
            tls: wire.usesTLS ? Self.tls : nil
        )
    }

    private func get(_ path: String, close: Bool = false, headers: [(String, String)] = []) -> KeepAliveRequest {
        KeepAliveRequest(method: .GET, target: path, headers: headers, closeConnection: close)
    }

    private static let soon: TimeAmount = .seconds(10)
    /// Long enough that a handshake on a machine busy with the whole test suite still finishes: these tests are
    /// about reuse and endings, not about the connect deadline (`TLSConnectionTests` covers that).
    private static let handshakeBound: TimeAmount = .seconds(30)

    @Test(arguments: TestWire.allCases) func callsOneAfterAnotherShareOneConnection(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire)
        for _ in 0..<5 {
            let answer = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
            #expect(answer.status == 200)
            #expect(answer.body.map { String(buffer: $0) } == #"{"ok":true}"#)
        }
        #expect(server.accepted == 1)
        #expect(server.heads.count == 5)
        // HTTP/2 carries it as `:authority`, which the server's codec gives back as `host`.
        #expect(server.heads.allSatisfy { $0.lowercased().contains("host: 127.0.0.1:\(server.port)") })
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func concurrentCallsNeverOpenMoreThanTheBound(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 2)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await pool.execute(self.get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.accepted <= 2)
        #expect(server.heads.count == 20)
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func closeConnectionOpensOnePerCallAndSaysSo(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire)
        for _ in 0..<3 {
            _ = try await pool.execute(get("/ok", close: true), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(server.accepted == 3)
        // HTTP/2 has no `Connection` field: the client closes the connection itself.
        if wire != .tlsHTTP2 { #expect(server.heads.allSatisfy { $0.contains("Connection: close") }) }
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func aServerThatClosesAfterAnsweringGetsANewConnectionNextTime(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        let closing = try await pool.execute(get("/close"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(closing.status == 503)
        #expect(closing.retryAfter == "7")
        let next = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(next.status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func idleConnectionsTheServerClosedAreNotUsedAgain(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        _ = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        await server.closeConnections()
        // Whether or not the pool has heard of the close yet, the call goes out on a live connection.
        let answer = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(answer.status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    /// On HTTP/2 only the stream goes: its neighbours' connection stays.
    @Test(arguments: TestWire.allCases) func aBodyOverTheLimitKeepsItsStatusAndLosesTheConnection(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        let answer = try await pool.execute(get("/big"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(answer.status == 200)
        #expect(answer.body == nil)
        // The unread body is not drained into the next answer: a new connection (or stream) carries it.
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.accepted == (wire == .tlsHTTP2 ? 1 : 2))
        pool.shutdown()
        await server.stop()
    }

    /// On HTTP/2 the deadline resets the stream and the connection carries the next call.
    @Test(arguments: TestWire.allCases) func aStalledAnswerEndsAtTheDeadlineAndTheConnectionIsNotReused(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        // Connected first: the short deadline below is for the answer, not a first TLS handshake.
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        await #expect(throws: KeepAliveHTTPError.deadlineExceeded) {
            try await pool.execute(get("/stall"), deadline: .now() + .milliseconds(200), maxBodyBytes: 1024)
        }
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.accepted == (wire == .tlsHTTP2 ? 1 : 2))
        pool.shutdown()
        await server.stop()
    }

    /// HTTP/1.1 only: an HTTP/2 connection has a free stream for the second call.
    @Test(arguments: [TestWire.plain, .tlsHTTP1]) func waitingForAConnectionCountsAgainstTheDeadline(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = try? await pool.execute(self.get("/stall"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
            }
            // Queued behind the stalled call on the only connection.
            while server.heads.isEmpty { await Task.yield() }
            await #expect(throws: KeepAliveHTTPError.deadlineExceeded) {
                try await pool.execute(self.get("/ok"), deadline: .now() + .milliseconds(200), maxBodyBytes: 1024)
            }
            #expect(server.heads.count == 1)
            group.cancelAll()
        }
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func cancellingTheCallerEndsTheExchange(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        let call = Task { try await pool.execute(self.get("/stall"), deadline: .now() + Self.soon, maxBodyBytes: 1024) }
        while server.heads.isEmpty { await Task.yield() }
        call.cancel()
        await #expect(throws: KeepAliveHTTPError.cancelled) { try await call.value }
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func aConnectionDroppedBeforeTheAnswerIsAClose(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        await #expect(throws: KeepAliveHTTPError.closedByServer) {
            try await pool.execute(get("/drop"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        // A reset HTTP/2 stream leaves its connection open.
        #expect(pool.openConnections == (wire == .tlsHTTP2 ? 1 : 0))
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func aRefusedConnectionFailsTheCallAndFreesItsPlace(wire: TestWire) async throws {
        let server = try await server(wire)
        let port = server.port
        await server.stop()
        // A budget of one: a failed connect that kept its place would turn the second call into a budget refusal.
        let budget = ConnectionBudget(limit: 1)
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "\(wire.scheme)://127.0.0.1:\(port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 1,
            budget: budget,
            tls: wire.usesTLS ? Self.tls : nil
        )
        for _ in 0..<2 {
            do {
                _ = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
                Issue.record("answered on a closed port")
            } catch let error as KeepAliveHTTPError {
                guard case .connectFailed = error else {
                    Issue.record("\(error)")
                    continue
                }
            }
        }
        #expect(pool.openConnections == 0)
        #expect(budget.openConnections == 0)
        pool.shutdown()
    }

    @Test(arguments: TestWire.allCases) func aHeaderValueThatWouldSplitTheRequestIsNeverSent(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        await #expect(throws: KeepAliveHTTPError.self) {
            try await pool.execute(
                get("/ok", headers: [("Authorization", "Bearer x\r\nX-Injected: 1")]),
                deadline: .now() + Self.soon,
                maxBodyBytes: 1024
            )
        }
        #expect(server.heads.allSatisfy { !$0.contains("X-Injected") })
        pool.shutdown()
        await server.stop()
    }

    /// A reused connection closed under a request (HTTP/1.1), or on HTTP/2 a GOAWAY naming no stream (a new
    /// connection) or a refused stream (the same one): a GET goes out once more.
    @Test(arguments: TestWire.allCases, ["/drop-once", "/refuse-once"]) func anIdleCloseIsRetriedOnceForAGet(
        wire: TestWire,
        path: String
    ) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(try await pool.execute(get(path), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.accepted == (wire == .tlsHTTP2 && path == "/refuse-once" ? 1 : 2))
        #expect(server.heads.count == 3)
        pool.shutdown()
        await server.stop()
    }

    /// The same close fails a POST: the server may have acted on it.
    @Test(arguments: TestWire.allCases) func anIdleCloseFailsAPost(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire, connections: 1)
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        let post = KeepAliveRequest(method: .POST, target: "/drop-once", body: ByteBuffer(string: "x"))
        await #expect(throws: KeepAliveHTTPError.closedByServer) {
            try await pool.execute(post, deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(server.heads.count == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func afterShutdownCallsFailAtOnce(wire: TestWire) async throws {
        let server = try await server(wire)
        let pool = pool(server, wire)
        pool.shutdown()
        await #expect(throws: KeepAliveHTTPError.shutdown) {
            try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(server.accepted == 0)
        await server.stop()
    }
}
