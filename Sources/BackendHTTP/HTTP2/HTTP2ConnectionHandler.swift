import NIOCore
import NIOHTTP2

/// Watches an HTTP/2 connection for its pool: the server's first SETTINGS makes it ready (with its stream limit), a
/// GOAWAY stops new streams on it, and its close takes it out of the pool.
final class HTTP2ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    /// Streams a connection carries when the server states no limit (RFC 9113 §6.5.2 recommends at least 100).
    static let defaultStreamLimit = 100

    private var ready: EventLoopPromise<ConnectionReady>?
    private let verdict: HandshakeVerdict?
    /// Set once the pool has wrapped this connection.
    var connection: PooledConnection?

    init(ready: EventLoopPromise<ConnectionReady>, verdict: HandshakeVerdict?) {
        self.ready = ready
        self.verdict = verdict
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            guard let ready else { return }
            self.ready = nil
            let limit = settings.last { $0.parameter == .maxConcurrentStreams }?.value ?? Self.defaultStreamLimit
            ready.succeed(ConnectionReady(version: .http2, slots: max(1, limit)))
        case .goAway(let lastStream, _, _):
            if let connection {
                connection.stopAccepting(lastStream: Int(lastStream))
                connection.pool.closed(connection)
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let ready {
            self.ready = nil
            let failure = verdict?.recorded ?? TLSHandshakeFailure.classify(error)
            ready.fail(failure.map { KeepAliveHTTPError.tls($0) } ?? .protocolError("\(error)"))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let ready {
            self.ready = nil
            ready.fail(verdict?.recorded.map { KeepAliveHTTPError.tls($0) } ?? KeepAliveHTTPError.closedByServer)
        }
        if let connection { connection.pool.closed(connection) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ready?.fail(KeepAliveHTTPError.closedByServer)
        ready = nil
    }
}

/// A connection that can carry exchanges: its HTTP version and how many at once.
struct ConnectionReady: Sendable {
    var version: NegotiatedHTTPVersion
    var slots: Int
}
