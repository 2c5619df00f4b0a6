import EventLoopExecutor
import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird server child channel (HTTP/1.1, TLS, HTTP/2), with each connection's task on its channel's event
/// loop.
///
/// Hummingbird 2 runs a connection's task on the global concurrent executor, so every request crosses threads twice
/// (loop to pool to loop) and wakes a sleeping thread each way; under a fleet of devices that each poll every few
/// seconds no two requests share a wake-up. Preferring the channel's loop keeps read, routing and write on one
/// thread. Hummingbird 2.28 has no option for this; the wrapper changes nothing else.
///
/// Over HTTP/2 the streams of a connection are child tasks of its task, so they inherit the preference, and a
/// stream channel shares its connection's loop: every request of the connection is routed on that loop.
struct ConnectionLoopChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base

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
            ConnectionLoopChannel(base: HTTP1Channel(responder: responder, configuration: configuration))
        }
    }
}
