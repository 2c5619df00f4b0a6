import BackendHTTP
import NIOCore
import NIOPosix
import Testing

/// Pools sharing one ``ConnectionBudget`` (the daemon's share of its open-file limit) against a real loopback server:
/// past the budget a connect is refused at once, not attempted, and a closed connection gives its place back.
@Suite struct ConnectionBudgetTests {
    private func pool(_ server: ScriptedServer, connections: Int = 1, budget: ConnectionBudget) -> KeepAliveConnectionPool {
        KeepAliveConnectionPool(
            origin: Origin(baseURL: "http://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: connections,
            budget: budget
        )
    }

    private func ok(_ pool: KeepAliveConnectionPool) async throws -> Int {
        try await pool.execute(KeepAliveRequest(method: .GET, target: "/ok"), deadline: .now() + .seconds(10), maxBodyBytes: 1024).status
    }

    @Test func aPoolPastTheBudgetIsRefusedUntilAnotherPoolsConnectionCloses() async throws {
        let server = try await ScriptedServer()
        let budget = ConnectionBudget(limit: 2)
        // Three devices with a connection each (`per-device`), two connections allowed.
        let first = pool(server, budget: budget)
        let second = pool(server, budget: budget)
        let third = pool(server, budget: budget)
        #expect(try await ok(first) == 200)
        #expect(try await ok(second) == 200)
        #expect(budget.openConnections == 2)
        await #expect(throws: KeepAliveHTTPError.connectionBudgetExhausted(limit: 2)) { try await ok(third) }
        #expect(server.accepted == 2)

        // The server closes its idle connections (as its keep-alive timeout does): their places come back.
        await server.closeConnections()
        #expect(try await eventually { budget.openConnections == 0 })
        #expect(try await ok(third) == 200)
        #expect(budget.openConnections == 1)
        #expect(server.accepted == 3)
        for pool in [first, second, third] { pool.shutdown() }
        await server.stop()
    }

    @Test func callersOfAPoolThatHasAConnectionWaitForItInsteadOfFailing() async throws {
        let server = try await ScriptedServer()
        let budget = ConnectionBudget(limit: 1)
        // A pool allowed four connections, but the budget leaves it one: every call still answers, over that one.
        let shared = pool(server, connections: 4, budget: budget)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 { group.addTask { try await ok(shared) } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.accepted == 1)
        #expect(budget.openConnections == 1)
        shared.shutdown()
        await server.stop()
    }
}

/// Polls `condition` until it holds, at most `timeout` (waits for a close that happens on an event loop).
private func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}
