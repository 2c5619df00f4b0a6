import NIOCore
import RegcodeSupport

/// In a listening channel's pipeline: counts each accepted connection against the listener's cap and, past it,
/// closes the new connection at once instead of handing it on, so a flood costs one descriptor for an instant per
/// connection and never the descriptors the fleet and the database need.
final class ConnectionCapHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let counters: ListenerCounters
    private let log: RepeatLimitedLog<ContinuousClock>

    init(counters: ListenerCounters, log: RepeatLimitedLog<ContinuousClock>) {
        self.counters = counters
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let accepted = self.unwrapInboundIn(data)
        guard self.counters.admit() else {
            // Not registered yet: closing it here releases its descriptor before anything is set up for it.
            accepted.close(promise: nil)
            let counters = self.counters
            self.log.log(
                .warning,
                reason: "over the cap",
                "refused a connection over the listener's cap",
                metadata: ["listener": "\(counters.name)", "listener.cap": "\(counters.cap)"]
            )
            return
        }
        let counters = self.counters
        accepted.closeFuture.whenComplete { _ in counters.closed() }
        context.fireChannelRead(data)
    }
}

/// In a listening channel's pipeline, after NIO's `AcceptBackoffHandler`: keeps accept errors (EMFILE, ENFILE and the
/// like, which leave the listener open) from ending the accept loop, and logs them at most once per interval.
final class AcceptErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let name: String
    private let log: RepeatLimitedLog<ContinuousClock>

    init(name: String, log: RepeatLimitedLog<ContinuousClock>) {
        self.name = name
        self.log = log
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason = (error as? IOError).map { "accept errno \($0.errnoCode)" } ?? "accept \(type(of: error))"
        self.log.log(.warning, reason: reason, "accepting a connection failed", metadata: ["listener": "\(self.name)", "error": "\(error)"])
    }
}
