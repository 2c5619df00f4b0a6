import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The last handler of a pooled HTTP/1.1 connection, or of one HTTP/2 stream: sends one exchange's request at a time
/// and collects its answer, then gives the connection (or the stream's slot) back to its pool, or closes it.
final class ExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        case idle
        case awaitingHead(Exchange)
        case receivingBody(Exchange, status: Int, retryAfter: String?, body: ByteBuffer?, keepAlive: Bool)
        /// Closing or closed: nothing more is sent or delivered.
        case closed
    }

    /// Where it runs: a whole HTTP/1.1 connection, or one stream of an HTTP/2 connection (its exchange given at
    /// creation, its slot handed back once).
    private enum Carrier {
        case connection
        case stream(PooledConnection, pending: Exchange?, slotReleased: Bool)
    }

    private let origin: Origin
    private var state = State.idle
    private var carrier: Carrier
    /// Exchanges this connection completed: a reused connection may have been closed by the server's idle
    /// timeout just as a request went out on it.
    private var completed = 0
    /// What ended a stream early (a reset), for the exchange's failure.
    private var streamError: (any Error)?
    private var context: ChannelHandlerContext?
    /// Set once the pool has wrapped this connection (HTTP/1.1); the handler reports to the pool through it.
    ///
    /// Weak because the connection holds this handler (its ``PooledConnection/Wire``): a strong reference back made
    /// a cycle that kept every closed connection, its channel and its buffers alive, about 2 KB a connection, which
    /// under `client_address: bind` (a connection closed to make room for another address at nearly every poll) grew
    /// the daemon without end. The pool holds the connection from connect to close, all the handler needs it for.
    weak var connection: PooledConnection?

    init(origin: Origin) {
        self.origin = origin
        self.carrier = .connection
    }

    /// One HTTP/2 stream of `connection`, carrying `exchange`.
    init(origin: Origin, stream exchange: Exchange, of connection: PooledConnection) {
        self.origin = origin
        self.carrier = .stream(connection, pending: exchange, slotReleased: false)
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { startPending() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startPending()
        context.fireChannelActive()
    }

    private func startPending() {
        guard case .stream(let connection, let pending?, let released) = carrier, let context else { return }
        carrier = .stream(connection, pending: nil, slotReleased: released)
        guard pending.bind(stream: context.channel) else {
            // Ended (deadline, cancellation) before its stream existed.
            context.close(promise: nil)
            return
        }
        start(pending)
    }

    /// Sends `exchange`'s request; on the channel's event loop.
    func start(_ exchange: Exchange) {
        guard case .idle = state, let context, context.channel.isActive else {
            // The server closed it while it sat idle, before the pool heard: nothing was sent, so the
            // exchange goes back to the pool for another connection.
            if let connection {
                if case .connection = carrier { connection.pool.closed(connection) }
                if exchange.detach() { connection.pool.submit(exchange) }
            } else {
                exchange.finish(.failure(.closedByServer))
            }
            return
        }
        let request = exchange.request
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 3)
        // On HTTP/2 the codec makes `Host` the `:authority` pseudo-header.
        headers.add(name: "Host", value: origin.hostHeader)
        for (name, value) in request.headers {
            headers.add(name: name, value: value)
        }
        if let body = request.body {
            headers.add(name: "Content-Length", value: String(body.readableBytes))
        } else if request.method == .POST || request.method == .PUT {
            headers.add(name: "Content-Length", value: "0")
        }
        // HTTP/2 has no `Connection` field (RFC 9113 §8.2.2); a per-request stream's connection is closed instead.
        if request.closeConnection, case .connection = carrier {
            headers.add(name: "Connection", value: "close")
        }
        let uri = origin.pathPrefix.isEmpty ? request.target : origin.pathPrefix + request.target
        state = .awaitingHead(exchange)
        context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: request.method, uri: uri, headers: headers))), promise: nil)
        if let body = request.body {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), .awaitingHead(let exchange)):
            let status = Int(head.status.code)
            let retryAfter = head.headers.first(name: "Retry-After")
            if let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > exchange.maxBodyBytes {
                tooLarge(exchange, status: status, retryAfter: retryAfter, context: context)
                return
            }
            let keepAlive = head.isKeepAlive && !exchange.request.closeConnection
            state = .receivingBody(exchange, status: status, retryAfter: retryAfter, body: nil, keepAlive: keepAlive)
        case (.body(var part), .receivingBody(let exchange, let status, let retryAfter, var body, let keepAlive)):
            // Drop the state's reference first so the buffer grows in place.
            state = .closed
            if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
            if body!.readableBytes > exchange.maxBodyBytes {
                tooLarge(exchange, status: status, retryAfter: retryAfter, context: context)
                return
            }
            state = .receivingBody(exchange, status: status, retryAfter: retryAfter, body: body, keepAlive: keepAlive)
        case (.end, .receivingBody(let exchange, let status, let retryAfter, let body, let keepAlive)):
            completed += 1
            let response = KeepAliveResponse(status: status, retryAfter: retryAfter, body: body ?? ByteBuffer())
            switch carrier {
            case .connection:
                // The connection is free before the caller resumes, so a call it makes next can reuse it.
                if keepAlive, let connection {
                    state = .idle
                    connection.pool.release(connection)
                } else {
                    state = .closed
                    context.close(promise: nil)
                }
            case .stream(let connection, _, _):
                // The stream closes by itself; its slot is free before the caller resumes.
                state = .closed
                releaseSlot()
                if exchange.request.closeConnection { connection.channel.close(promise: nil) }
            }
            exchange.finish(.success(response))
        case (_, .closed):
            break
        default:
            fail(.protocolError("unexpected response part"), context: context)
        }
    }

    /// The body passed the limit: the caller gets the status, and the connection (or stream) closes instead of draining it.
    private func tooLarge(_ exchange: Exchange, status: Int, retryAfter: String?, context: ChannelHandlerContext) {
        state = .closed
        exchange.finish(.success(KeepAliveResponse(status: status, retryAfter: retryAfter, body: nil)))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .stream = carrier {
            // A reset stream closes; whether its exchange goes out again is decided there.
            streamError = error
            context.close(promise: nil)
            return
        }
        let failure = TLSHandshakeFailure.classify(error).map { KeepAliveHTTPError.tls($0) } ?? .protocolError("\(error)")
        fail(failure, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let exchange = current
        let answerStarted: Bool
        if case .awaitingHead = state { answerStarted = false } else { answerStarted = true }
        state = .closed
        switch carrier {
        case .connection:
            // Held here: once the pool lets go of it, the weak reference is gone.
            let pool = connection?.pool
            if let connection { connection.pool.closed(connection) }
            if let exchange {
                // A reused connection that closes before any answer most likely met the server's idle timeout
                // with our request in flight: an idempotent request goes out once more on a new connection
                // (RFC 9110 §9.2.2), anything else fails, since the server may have acted on it.
                let retried = !answerStarted && completed > 0 && (pool?.retry(exchange) ?? false)
                if !retried { exchange.finish(.failure(.closedByServer)) }
            }
        case .stream(let connection, let pending, _):
            // A stream the server did not process (refused, or above a GOAWAY's last stream: RFC 9113 §8.7), or one whose
            // connection went away before any answer, is as an idle close; any other reset may have been acted on.
            // (NIOHTTP2 closes the streams a GOAWAY drops with CANCEL, so the stream's id tells them apart.)
            if let exchange {
                let unprocessed: Bool
                switch streamError {
                case nil: unprocessed = true
                case let closed as NIOHTTP2Errors.StreamClosed:
                    unprocessed = closed.errorCode == .refusedStream || connection.goAwayDropped(Int(closed.streamID))
                default: unprocessed = false
                }
                let retried = !answerStarted && unprocessed && connection.pool.retry(exchange)
                if !retried { exchange.finish(.failure(.closedByServer)) }
            } else if let pending, pending.detach() {
                connection.pool.submit(pending)
            }
            releaseSlot()
        }
        context.fireChannelInactive()
    }

    private func releaseSlot() {
        guard case .stream(let connection, let pending, false) = carrier else { return }
        carrier = .stream(connection, pending: pending, slotReleased: true)
        connection.pool.release(connection)
    }

    private var current: Exchange? {
        switch state {
        case .awaitingHead(let exchange), .receivingBody(let exchange, _, _, _, _): exchange
        case .idle, .closed: nil
        }
    }

    private func fail(_ error: KeepAliveHTTPError, context: ChannelHandlerContext) {
        let exchange = current
        state = .closed
        exchange?.finish(.failure(error))
        context.close(promise: nil)
    }
}
