import NIOCore

/// Tells an event stream that its client has gone: the client's end of the connection closed (Hummingbird allows
/// half-closure, so a client's `close` arrives as `inputClosed`, not as a closed channel) or the channel went inactive.
///
/// Without it a stream whose client left is found only when writes to it fail: two keep-alives later (30 s by
/// default), holding its place under the stream limit and its subscription all the while. An `EventSource` never
/// sends after its request, so the end of its input means it left.
final class ClientDepartureHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    /// Completed once when the client leaves.
    let departed: EventLoopPromise<Void>

    init(departed: EventLoopPromise<Void>) {
        self.departed = departed
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { self.departed.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.departed.succeed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // The stream ended first: nothing waits for the client any more.
        self.departed.succeed()
    }
}
