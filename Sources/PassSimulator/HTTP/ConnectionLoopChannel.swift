import EventLoopExecutor
import HummingbirdCore
import Logging
import NIOCore

/// Any server child channel (here Hummingbird's TLS and HTTP/2 ones), with each connection's task on its
/// channel's event loop, for the reason ``ConnectionLoopHTTP1Channel`` gives.
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
