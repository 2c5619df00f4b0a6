import HummingbirdCore
import ListenerGuard
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// A server child channel that counts each accepted connection in ``ConnectionCounters`` by wire, and for TLS
/// also its completed handshake by ALPN protocol, and gives an HTTP/1.1 connection its listener's read deadline;
/// otherwise it is its base channel.
struct ConnectionCountingChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    /// What the listener speaks.
    enum Wire {
        case plain
        case tls
    }

    let base: Base
    let wire: Wire
    let counters: ConnectionCounters
    var listener: ListenerGuard?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        self.counters.peers.accepted(from: channel.remoteAddress)
        switch self.wire {
        case .plain:
            self.counters.acceptedPlain()
            return self.base.setup(channel: channel, logger: logger).flatMapThrowing { [listener] value in
                try listener?.addHTTPReadDeadline(to: channel)
                return value
            }
        case .tls:
            self.counters.acceptedTLS()
            // The base adds the TLS handler; the counter goes right after it. This runs before the channel is
            // registered, so no handshake can have completed yet.
            return self.base.setup(channel: channel, logger: logger).flatMapThrowing { [counters, listener] value in
                let pipeline = channel.pipeline.syncOperations
                let tls = try pipeline.handler(type: NIOSSLServerHandler.self)
                try pipeline.addHandler(TLSHandshakeCounter(counters: counters, listener: listener), position: .after(tls))
                if (try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)) != nil {
                    try listener?.addHTTPReadDeadline(to: channel)
                } else {
                    // HTTP/2 or HTTP/1.1 by ALPN: no HTTP handlers until the handshake is done.
                    try listener?.addTLSReadDeadline(to: channel)
                }
                return value
            }
        }
    }

    func handle(value: Value, logger: Logger) async {
        await self.base.handle(value: value, logger: logger)
    }
}
