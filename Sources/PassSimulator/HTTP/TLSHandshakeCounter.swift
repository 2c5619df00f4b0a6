import NIOCore
import NIOTLS

/// Counts a connection's completed TLS handshake by the protocol ALPN chose, then leaves the pipeline.
///
/// Sits right after the TLS handler: the ALPN handler further on consumes the handshake event.
final class TLSHandshakeCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let counters: ConnectionCounters

    init(counters: ConnectionCounters) {
        self.counters = counters
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted(let negotiatedProtocol) = tlsEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        self.counters.completedHandshake(negotiatedProtocol: negotiatedProtocol)
        context.fireUserInboundEventTriggered(event)
        // Nothing more to see on this connection; every later read then skips this handler.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
