import KeepAliveHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The pool against a real loopback server: reuse, its bound, deadlines, cancellation and every way a
/// connection ends. Deadlines are short only so that a stalled exchange ends; no test measures time.
@Suite struct KeepAliveConnectionPoolTests {
    private func pool(_ server: ScriptedServer, connections: Int = 4) -> KeepAliveConnectionPool {
        KeepAliveConnectionPool(
            origin: Origin(baseURL: "http://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: connections
        )
    }

    private func get(_ path: String, close: Bool = false, headers: [(String, String)] = []) -> KeepAliveRequest {
        KeepAliveRequest(method: .GET, target: path, headers: headers, closeConnection: close)
    }

    private static let soon: TimeAmount = .seconds(10)

    @Test func callsOneAfterAnotherShareOneConnection() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server)
        for _ in 0..<5 {
            let answer = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
            #expect(answer.status == 200)
            #expect(answer.body.map { String(buffer: $0) } == #"{"ok":true}"#)
        }
        #expect(server.accepted == 1)
        #expect(server.heads.count == 5)
        #expect(server.heads.allSatisfy { $0.contains("Host: 127.0.0.1:\(server.port)") })
        pool.shutdown()
        await server.stop()
    }

    @Test func concurrentCallsNeverOpenMoreThanTheBound() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 2)
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

    @Test func closeConnectionOpensOnePerCallAndSaysSo() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server)
        for _ in 0..<3 {
            _ = try await pool.execute(get("/ok", close: true), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(server.accepted == 3)
        #expect(server.heads.allSatisfy { $0.contains("Connection: close") })
        pool.shutdown()
        await server.stop()
    }

    @Test func aServerThatClosesAfterAnsweringGetsANewConnectionNextTime() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        let closing = try await pool.execute(get("/close"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(closing.status == 503)
        #expect(closing.retryAfter == "7")
        let next = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(next.status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test func idleConnectionsTheServerClosedAreNotUsedAgain() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        _ = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        await server.closeConnections()
        // Whether or not the pool has heard of the close yet, the call goes out on a live connection.
        let answer = try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(answer.status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test func aBodyOverTheLimitKeepsItsStatusAndLosesTheConnection() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        let answer = try await pool.execute(get("/big"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        #expect(answer.status == 200)
        #expect(answer.body == nil)
        // The unread body is not drained into the next answer: a new connection carries it.
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test func aStalledAnswerEndsAtTheDeadlineAndTheConnectionIsNotReused() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        await #expect(throws: KeepAliveHTTPError.deadlineExceeded) {
            try await pool.execute(get("/stall"), deadline: .now() + .milliseconds(200), maxBodyBytes: 1024)
        }
        #expect(try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.accepted == 2)
        pool.shutdown()
        await server.stop()
    }

    @Test func waitingForAConnectionCountsAgainstTheDeadline() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
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

    @Test func cancellingTheCallerEndsTheExchange() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        let call = Task { try await pool.execute(self.get("/stall"), deadline: .now() + Self.soon, maxBodyBytes: 1024) }
        while server.heads.isEmpty { await Task.yield() }
        call.cancel()
        await #expect(throws: KeepAliveHTTPError.cancelled) { try await call.value }
        pool.shutdown()
        await server.stop()
    }

    @Test func aConnectionDroppedBeforeTheAnswerIsAClose() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
        await #expect(throws: KeepAliveHTTPError.closedByServer) {
            try await pool.execute(get("/drop"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(pool.openConnections == 0)
        pool.shutdown()
        await server.stop()
    }

    @Test func aRefusedConnectionFailsTheCallAndFreesItsPlace() async throws {
        let server = try await ScriptedServer()
        let port = server.port
        await server.stop()
        // A budget of one: a failed connect that kept its place would turn the second call into a budget refusal.
        let budget = ConnectionBudget(limit: 1)
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "http://127.0.0.1:\(port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 1,
            budget: budget
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

    @Test func aHeaderValueThatWouldSplitTheRequestIsNeverSent() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server, connections: 1)
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

    @Test func afterShutdownCallsFailAtOnce() async throws {
        let server = try await ScriptedServer()
        let pool = pool(server)
        pool.shutdown()
        await #expect(throws: KeepAliveHTTPError.shutdown) {
            try await pool.execute(get("/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024)
        }
        #expect(server.accepted == 0)
        await server.stop()
    }
}
