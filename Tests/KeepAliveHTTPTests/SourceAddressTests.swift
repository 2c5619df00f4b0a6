import KeepAliveHTTP
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
