import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import PassSimulator

@Suite("Connection loop")
struct ConnectionLoopTests {
    /// Keeps the channel, so a handler can tell whether it runs on its connection's event loop.
    struct ChannelContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let channel: any Channel

        init(source: ApplicationRequestContextSource) {
            self.coreContext = .init(source: source)
            self.channel = source.channel
        }
    }

    static func application(server: HTTPServerBuilder) -> some ApplicationProtocol {
        let router = Router(context: ChannelContext.self)
        router.get("where") { _, context in context.channel.eventLoop.inEventLoop ? "connection loop" : "elsewhere" }
        return Application(router: router, server: server)
    }

    /// Every request of every connection is routed on that connection's loop, over real sockets.
    @Test func handlersRunOnTheirConnectionsLoop() async throws {
        try await Self.application(server: .http1OnConnectionLoop()).test(.live) { client in
            for _ in 0..<8 {
                let answer = try await client.execute(uri: "/where", method: .get)
                #expect(answer.status == .ok)
                #expect(String(buffer: answer.body) == "connection loop")
            }
        }
    }

    /// Over TLS too, with HTTP/2 (every stream of the connection) and HTTP/1.1, checked with curl.
    @Test(arguments: [Curl.Version.http2, .http1])
    func tlsHandlersRunOnTheirConnectionsLoop(version: Curl.Version) async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        let router = Router(context: ChannelContext.self)
        router.get("where") { _, context in context.channel.eventLoop.inEventLoop ? "connection loop" : "elsewhere" }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            server: .simulator(tls: lab.tls(), counters: ConnectionCounters()),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: TLSLab.quietLogger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let run = try await lab.curl.run(Array(repeating: "https://127.0.0.1:\(port)/where", count: 4), version: version)
            #expect(run.answers.count == 4, "\(run.stderr)")
            for answer in run.answers {
                #expect(answer.httpVersion == (version == .http2 ? "2" : "1.1"))
                #expect(answer.body == "connection loop")
            }
        }
    }

    /// The check above can fail: Hummingbird's own HTTP/1.1 channel routes off the loop.
    @Test func hummingbirdsDefaultRoutesElsewhere() async throws {
        try await Self.application(server: .http1()).test(.live) { client in
            let answer = try await client.execute(uri: "/where", method: .get)
            #expect(String(buffer: answer.body) == "elsewhere")
        }
    }
}
