import BackendHTTP
import NIOCore
import NIOPosix
import Testing

/// Requests bound to a local source address (`bind` client addresses): the server sees each address as the peer, on
/// every wire, and the pool's bound holds by closing an idle connection of another address.
@Suite struct SourceAddressTests {
    private static let pki = try! TestPKI()
    private static let tls = try! TLSClientContext(settings: TLSClientSettings(caFile: pki.caFile))
    private static let soon: TimeAmount = .seconds(10)

    private func get(from source: String?) throws -> KeepAliveRequest {
        KeepAliveRequest(method: .GET, target: "/ok", sourceAddress: try source.map { try SocketAddress(ipAddress: $0, port: 0) })
    }

    @Test(arguments: TestWire.allCases) func theServerSeesTheBoundSourceAddress(wire: TestWire) async throws {
        let server = try await ScriptedServer(wire: wire, tls: wire.usesTLS ? Self.pki.server() : nil)
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "\(wire.scheme)://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 2,
            connectTimeout: .seconds(30),
            tls: wire.usesTLS ? Self.tls : nil
        )
        // Every 127.0.0.0/8 address is local on Linux.
        for source in ["127.0.1.7", "127.0.1.8", "127.0.1.7"] {
            #expect(try await pool.execute(get(from: source), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        }
        // The second call from 127.0.1.7 found its own connection again.
        #expect(server.peers == ["127.0.1.7", "127.0.1.8"])
        // A third address with the bound reached: an idle connection of another address makes room.
        #expect(try await pool.execute(get(from: "127.0.1.9"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.peers == ["127.0.1.7", "127.0.1.8", "127.0.1.9"])
        #expect(pool.openConnections <= 2)
        // A call without a source address takes no bound connection: the host's own address.
        #expect(try await pool.execute(get(from: nil), deadline: .now() + Self.soon, maxBodyBytes: 1024).status == 200)
        #expect(server.peers.last == "127.0.0.1")
        #expect(pool.openConnections <= 2)
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: TestWire.allCases) func manyAddressesThroughFewConnectionsAllGetAnswersWithinTheBound(wire: TestWire) async throws {
        let server = try await ScriptedServer(wire: wire, tls: wire.usesTLS ? Self.pki.server() : nil)
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "\(wire.scheme)://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 3,
            connectTimeout: .seconds(30),
            tls: wire.usesTLS ? Self.tls : nil
        )
        let sources = (1...12).map { "127.0.2.\($0)" }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for source in sources + sources {
                let request = try get(from: source)
                group.addTask { try await pool.execute(request, deadline: .now() + Self.soon, maxBodyBytes: 1024).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(Set(server.peers) == Set(sources))
        #expect(pool.openConnections <= 3)
        pool.shutdown()
        await server.stop()
    }
}

/// A connection closed to make room for another address is freed, with its channel: none stays in memory.
@Suite struct ClosedConnectionsAreFreedTests {
    private static let pki = try! TestPKI()
    private static let tls = try! TLSClientContext(settings: TLSClientSettings(caFile: pki.caFile))

    @Test(arguments: TestWire.allCases) func everyConnectionClosedForAnotherAddressIsFreed(wire: TestWire) async throws {
        let server = try await ScriptedServer(wire: wire, tls: wire.usesTLS ? Self.pki.server() : nil)
        let statistics = TransportStatistics()
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "\(wire.scheme)://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 2,
            connectTimeout: .seconds(30),
            tls: wire.usesTLS ? Self.tls : nil,
            statistics: statistics
        )
        // 40 addresses in turn through 2 connections: nearly every call closes one connection and opens another,
        // as a `bind` fleet's polls do.
        for round in 0..<40 {
            let request = KeepAliveRequest(method: .GET, target: "/ok", sourceAddress: try SocketAddress(ipAddress: "127.0.3.\(round + 1)", port: 0))
            #expect(try await pool.execute(request, deadline: .now() + .seconds(10), maxBodyBytes: 1024).status == 200)
        }
        let opened = statistics.counts.plainHTTP1 + statistics.counts.tlsHTTP1 + statistics.counts.tlsHTTP2
        #expect(opened >= 40)
        // Only the connections still open (at most the bound) and those whose close is under way are held; the
        // closes finish on the event loops shortly (a bounded wait, not a timing claim).
        var retained = statistics.retainedConnections
        for _ in 0..<200 where retained > 2 {
            try await Task.sleep(for: .milliseconds(10))
            retained = statistics.retainedConnections
        }
        #expect(retained <= 2, "\(retained) of \(opened) connections are still held in memory")
        pool.shutdown()
        for _ in 0..<200 where statistics.retainedConnections > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(statistics.retainedConnections == 0)
        await server.stop()
    }
}
