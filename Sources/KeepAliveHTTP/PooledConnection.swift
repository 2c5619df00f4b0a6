import NIOCore

/// One keep-alive connection of a pool: its channel and the handler that runs its exchanges.
final class PooledConnection: Sendable {
    let channel: any Channel
    let pool: KeepAliveConnectionPool
    private let handler: NIOLoopBound<ExchangeHandler>

    init(channel: any Channel, handler: ExchangeHandler, pool: KeepAliveConnectionPool) {
        self.channel = channel
        self.pool = pool
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Runs `exchange` on this connection, from any thread.
    func start(_ exchange: Exchange) {
        if channel.eventLoop.inEventLoop {
            handler.value.start(exchange)
        } else {
            channel.eventLoop.execute { [handler] in handler.value.start(exchange) }
        }
    }
}
