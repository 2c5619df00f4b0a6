import Hummingbird
import HummingbirdCore
import HummingbirdTesting
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

    /// The check above can fail: Hummingbird's own HTTP/1.1 channel routes off the loop.
    @Test func hummingbirdsDefaultRoutesElsewhere() async throws {
        try await Self.application(server: .http1()).test(.live) { client in
            let answer = try await client.execute(uri: "/where", method: .get)
            #expect(String(buffer: answer.body) == "elsewhere")
        }
    }
}
