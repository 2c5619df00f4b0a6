import NIOCore
import NIOHTTP1
import NIOHTTP2
import Synchronization

/// One connection of a pool: its channel and how it carries exchanges, one at a time (HTTP/1.1) or one per stream up
/// to the server's stream limit (HTTP/2).
final class PooledConnection: Sendable {
    enum Wire {
        case http1(ExchangeHandler)
        case http2(NIOHTTP2Handler.StreamMultiplexer)
    }

    let channel: any Channel
    let pool: KeepAliveConnectionPool
    let version: NegotiatedHTTPVersion
    /// Exchanges it carries at once: 1 on HTTP/1.1, the server's `SETTINGS_MAX_CONCURRENT_STREAMS` on HTTP/2.
    let slots: Int
    /// The local address it was bound to (``KeepAliveRequest/sourceAddress``); nil: the host's choice.
    let source: SocketAddress?
    private let wire: NIOLoopBound<Wire>
    /// Cleared by an HTTP/2 GOAWAY: the streams in flight finish, no new one starts.
    private let accepting = Atomic<Bool>(true)
    /// The last stream an HTTP/2 GOAWAY says the server processed (`Int.max` before any): the streams above it were
    /// not, and may go out again (RFC 9113 §6.8).
    private let goAwayLastStream = Atomic<Int>(Int.max)

    init(channel: any Channel, wire: Wire, slots: Int, source: SocketAddress?, pool: KeepAliveConnectionPool) {
        self.channel = channel
        self.source = source
        self.pool = pool
        self.slots = max(1, slots)
        switch wire {
        case .http1: self.version = .http1
        case .http2: self.version = .http2
        }
        self.wire = NIOLoopBound(wire, eventLoop: channel.eventLoop)
        pool.statistics?.connectionMade()
    }

    deinit {
        pool.statistics?.connectionFreed()
    }

    var isAccepting: Bool { accepting.load(ordering: .relaxed) }

    /// The server will take no new stream on it (HTTP/2 GOAWAY naming `lastStream`), or it is kept for one call.
    func stopAccepting(lastStream: Int = Int.max) {
        accepting.store(false, ordering: .relaxed)
        goAwayLastStream.min(lastStream, ordering: .relaxed)
    }

    /// Whether a GOAWAY said the server did not process stream `id`.
    func goAwayDropped(_ id: Int) -> Bool {
        id > goAwayLastStream.load(ordering: .relaxed)
    }

    /// Runs `exchange` on this connection, from any thread.
    func start(_ exchange: Exchange) {
        if channel.eventLoop.inEventLoop {
            startOnLoop(exchange)
        } else {
            channel.eventLoop.execute { self.startOnLoop(exchange) }
        }
    }

    private func startOnLoop(_ exchange: Exchange) {
        switch wire.value {
        case .http1(let handler):
            handler.start(exchange)
        case .http2(let multiplexer):
            let origin = pool.origin
            let promise = channel.eventLoop.makePromise(of: (any Channel).self)
            multiplexer.createStreamChannel(promise: promise) { stream in
                do {
                    let sync = stream.pipeline.syncOperations
                    try sync.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                    try sync.addHandler(ExchangeHandler(origin: origin, stream: exchange, of: self))
                    return stream.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return stream.eventLoop.makeFailedFuture(error)
                }
            }
            promise.futureResult.whenFailure { _ in
                // No stream (the connection is closing, or the stream limit was passed): nothing was sent, so any
                // request may go out once more.
                if exchange.claimRetry(), exchange.detach() {
                    self.pool.submit(exchange)
                } else {
                    exchange.finish(.failure(.closedByServer))
                }
                self.pool.release(self)
            }
        }
    }
}
