import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOTLS

/// Sits behind the TLS handler of a new connection until the handshake ends, then puts the pipeline of the negotiated
/// HTTP version in its place: HTTP/1.1's codec and an ``ExchangeHandler``, or HTTP/2 with an inline stream
/// multiplexer. A failed or overdue handshake fails `ready` with its reason.
///
/// NIOTLS's `ApplicationProtocolNegotiationHandler` does the switch but not the failure half (which certificate
/// check, which timeout), so both live here in one place.
final class TLSConnectionSetupHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let origin: Origin
    private let preference: HTTPVersionPreference
    private let verdict: HandshakeVerdict
    private let handshakeTimeout: TimeAmount
    private var ready: EventLoopPromise<ConnectionReady>?
    private var timer: Scheduled<Void>?

    init(
        origin: Origin,
        preference: HTTPVersionPreference,
        verdict: HandshakeVerdict,
        handshakeTimeout: TimeAmount,
        ready: EventLoopPromise<ConnectionReady>
    ) {
        self.origin = origin
        self.preference = preference
        self.verdict = verdict
        self.handshakeTimeout = handshakeTimeout
        self.ready = ready
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armTimer(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armTimer(context: context)
        context.fireChannelActive()
    }

    private func armTimer(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: handshakeTimeout) {
            let (handler, context) = loopBound.value
            handler.fail(.tls(.handshakeTimeout), context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted(let negotiated) = event as? TLSUserEvent, let ready else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        timer?.cancel()
        self.ready = nil
        if negotiated != "h2", preference == .http2 {
            ready.fail(KeepAliveHTTPError.tls(.http2NotOffered))
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        let sync = context.pipeline.syncOperations
        // Leaves first, so the handlers of the negotiated version go last, right behind the TLS handler.
        sync.removeHandler(self, promise: nil)
        do {
            if negotiated == "h2" {
                _ = try sync.configureHTTP2Pipeline(mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()) {
                    stream in
                    // Servers may not push to a client that never enabled it; a stream they open anyway is refused.
                    stream.close()
                }
                try sync.addHandler(HTTP2ConnectionHandler(ready: ready, verdict: verdict))
            } else {
                // Fields are checked once per request in `execute`, before anything is queued or sent.
                try sync.addHTTPClientHandlers(enableOutboundHeaderValidation: false)
                try sync.addHandler(ExchangeHandler(origin: origin))
                ready.succeed(ConnectionReady(version: .http1, slots: 1))
            }
        } catch {
            ready.fail(KeepAliveHTTPError.protocolError("connection set-up failed: \(error)"))
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let failure = verdict.recorded ?? TLSHandshakeFailure.classify(error) ?? .other(String(describing: error))
        fail(.tls(failure), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(verdict.recorded.map { .tls($0) } ?? .closedByServer, context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        ready?.fail(KeepAliveHTTPError.closedByServer)
        ready = nil
    }

    private func fail(_ error: KeepAliveHTTPError, context: ChannelHandlerContext) {
        timer?.cancel()
        guard let ready else { return }
        self.ready = nil
        ready.fail(error)
        context.close(promise: nil)
    }
}
