import ListenerGuard
import NIOCore
import NIOTLS

/// Counts a connection's completed TLS handshake by the protocol ALPN chose, settles the listener's read deadline for
/// that protocol, then leaves the pipeline.
///
/// Sits right after the TLS handler: the ALPN handler further on consumes the handshake event (and sets up the
/// protocol's handlers as it does).
final class TLSHandshakeCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let counters: ConnectionCounters
    private let listener: ListenerGuard?

    init(counters: ConnectionCounters, listener: ListenerGuard?) {
        self.counters = counters
        self.listener = listener
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted(let negotiatedProtocol) = tlsEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        self.counters.completedHandshake(negotiatedProtocol: negotiatedProtocol)
        context.fireUserInboundEventTriggered(event)
        self.listener?.settleTLSReadDeadline(in: context.pipeline.syncOperations)
        // Nothing more to see on this connection; every later read then skips this handler.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
