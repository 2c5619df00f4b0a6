import AdobePassClient
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import RegcodeEngine
import Synchronization
import Testing

/// The connection models seen from the server: which client port (TCP connection) carried each call.
@Suite struct ConnectionModelTests {
    struct PortContext: Hummingbird.RequestContext {
        var coreContext: CoreRequestContextStorage
        let clientPort: Int
        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            clientPort = source.channel.remoteAddress?.port ?? -1
        }
    }

    /// Runs three devices' calls (`GET profiles`), three each, one after the other, and returns the client port of every call by device.
    private func ports(_ model: ConnectionModel?) async throws -> [String: [Int]] {
        let seen = Mutex<[String: [Int]]>([:])
        let router = Router(context: PortContext.self)
        // `GET profiles`: the poll carries no device identifier (the OAS lists none for it).
        router.get("/api/v2/{requestor}/profiles") { request, context -> Response in
            // The device identifier header tells the calls of the three devices apart.
            let device = request.headers[HTTPField.Name("AP-Device-Identifier")!] ?? "?"
            seen.withLock { $0[device, default: []].append(context.clientPort) }
            return CaptureServer.json(.ok, #"{"profiles":{}}"#)
        }
        var logger = Logger(label: "connection-model-server")
        logger.logLevel = .critical
        let (portStream, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: logger
        )
        let pools = ConnectionPools()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            var iterator = portStream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let client = AdobePassClient(
                configuration: AdobePassClientConfiguration(baseURL: "http://127.0.0.1:\(port)"),
                connectionPools: pools,
                logger: Logger(label: "test")
            )
            for _ in 0..<3 {
                for device in ["box-a", "box-b", "box-c"] {
                    var context = Fixtures.context(deviceID: device, accessToken: "t")
                    context.connections = model
                    _ = await client.execute(.checkAuthentication, context: context)
                }
            }
            group.cancelAll()
        }
        pools.shutdown()
        return seen.withLock { $0 }
    }

    @Test func perDeviceGivesEachDeviceOneConnectionOfItsOwn() async throws {
        let ports = try await ports(.perDevice)
        #expect(ports.count == 3)
        for (device, used) in ports {
            #expect(used.count == 3, "\(device)")
            #expect(Set(used).count == 1, "\(device) used \(used)")
        }
        #expect(Set(ports.values.flatMap { $0 }).count == 3)
    }

    @Test func perRequestOpensAConnectionForEveryCall() async throws {
        let ports = try await ports(.perRequest)
        let all = ports.values.flatMap { $0 }
        #expect(all.count == 9)
        #expect(Set(all).count == 9)
    }

    @Test func sharedPoolReusesItsConnectionsAcrossDevices() async throws {
        let ports = try await ports(.shared(pool: "lab", connections: 1))
        let all = ports.values.flatMap { $0 }
        #expect(all.count == 9)
        #expect(Set(all).count == 1)
    }

    @Test func withoutAModelTheCommonPoolIsReused() async throws {
        let ports = try await ports(nil)
        #expect(Set(ports.values.flatMap { $0 }).count == 1)
    }
}
