import EventLoopExecutor
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 channel, with each connection's task on its channel's event loop.
///
/// Hummingbird 2 runs a connection's task on the global concurrent executor, so every request crosses
/// threads twice (loop to pool to loop) and wakes a sleeping thread each way; under a fleet of devices that
/// each poll every few seconds no two requests share a wake-up. Preferring the channel's loop keeps read,
/// routing and write on one thread. Hummingbird 2.28 has no option for this; the wrapper changes nothing else.
struct ConnectionLoopHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        self.base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await self.base.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with Hummingbird's defaults, each connection's task on its channel's event loop.
    static func http1OnConnectionLoop(configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        .init { responder in
            ConnectionLoopHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration))
        }
    }
}
