import BackendHTTP
import NIOCore
import NIOPosix
import RegcodeEngine
import Testing

@testable import AdobePassClient

/// A fleet split over loops: a call made on one of them gets keep-alive connections of that loop, and a pool's
/// connections are split over the loops.
@Suite struct ConnectionPoolLoopTests {
    @Test func aCallOnAFleetLoopGetsThatLoopsPoolWithItsShareOfConnections() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = Array(group.makeIterator())
        let pools = ConnectionPools(commonConnections: 5, loops: loops)
        let origin = try #require(Origin(baseURL: "http://127.0.0.1:9"))
        func pool(on loop: (any EventLoop)?, _ model: ConnectionModel?, device: String = "box-a") async throws -> KeepAliveConnectionPool {
            var context = Fixtures.context(deviceID: device)
            context.connections = model
            guard let loop else { return pools.pool(for: context, origin: origin) }
            return try await loop.submit { [context] in pools.pool(for: context, origin: origin) }.get()
        }

        let common0 = try await pool(on: loops[0], nil)
        let common1 = try await pool(on: loops[1], nil)
        #expect(common0 !== common1)
        #expect(common0.eventLoopGroup === loops[0])
        #expect(common1.eventLoopGroup === loops[1])
        #expect([common0.maxConnections, common1.maxConnections] == [3, 2], "five connections split over two loops")
        #expect(try await pool(on: loops[1], nil, device: "box-b") === common1, "one pool per loop, whichever device asks")
        #expect(try await pool(on: nil, nil) === common0, "off the fleet's loops: the first loop's")

        let shared0 = try await pool(on: loops[0], .shared(pool: "lab", connections: 4))
        let shared1 = try await pool(on: loops[1], .shared(pool: "lab", connections: 4))
        #expect(shared0 !== shared1 && shared0 !== common0)
        #expect([shared0.maxConnections, shared1.maxConnections] == [2, 2])

        // A device's own connection lives on the loop of its first call (its partition's) and stays one.
        let own = try await pool(on: loops[1], .perDevice, device: "box-c")
        #expect(own.eventLoopGroup === loops[1])
        #expect(own.maxConnections == 1)
        #expect(try await pool(on: loops[0], .perDevice, device: "box-c") === own)

        pools.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func withoutFleetLoopsOnePoolSpansTheCommonClientsLoops() async throws {
        let pools = ConnectionPools(commonConnections: 5)
        let origin = try #require(Origin(baseURL: "http://127.0.0.1:9"))
        let pool = pools.pool(for: Fixtures.context(), origin: origin)
        #expect(pool.maxConnections == 5)
        #expect(pool.eventLoopGroup === MultiThreadedEventLoopGroup.singleton)
        let onLoop = try await MultiThreadedEventLoopGroup.singleton.next().submit { pools.pool(for: Fixtures.context(), origin: origin) }.get()
        #expect(onLoop === pool)
        pools.shutdown()
    }
}
