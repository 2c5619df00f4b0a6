import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// First in a connection's pipeline, on its raw bytes: closes a connection whose request (a control line, or an HTTP
/// head and body) began and did not arrive whole within the read timeout, and, for control lines, a connection that
/// stayed silent both ways past the idle timeout with nothing holding it open (see ``ConnectionActivity``).
///
/// The read timeout counts only while the server wants input: a connection the server stopped reading (its own
/// back-pressure) is not the peer's fault. HTTP connections idle out in Hummingbird's own handler; they learn that a
/// request arrived whole from an ``HTTPRequestEndHandler`` behind the HTTP decoder.
package final class ReadDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = NIOAny
    package typealias OutboundOut = NIOAny

    /// How the handler knows a request is whole.
    package enum Framing: Sendable {
        /// A newline ends it.
        case lines
        /// An ``HTTPRequestEndHandler`` says so.
        case httpRequests
    }

    /// Why a connection was closed.
    enum Expiry: String {
        case read
        case idle

        var message: String {
            switch self {
            case .read: "closed a connection that sent a request too slowly"
            case .idle: "closed an idle connection"
            }
        }
    }

    private let framing: Framing
    private let readTimeout: TimeAmount?
    private let idleTimeout: TimeAmount?
    private let activity: ConnectionActivity?
    private let listener: ListenerGuard
    /// When the request now arriving began; nil between requests.
    private var partialSince: NIODeadline?
    private var lastTraffic = NIODeadline.uptimeNanoseconds(0)
    /// The server asked for input and has not had it yet.
    private var wantsInput = false
    /// When input last arrived (and the server's demand with it was met).
    private var lastInput = NIODeadline.uptimeNanoseconds(0)
    private var timer: (deadline: NIODeadline, task: Scheduled<Void>)?

    /// - Parameters:
    ///   - activity: For `.lines`, what keeps a quiet connection open; without it the idle timeout is not applied.
    package init(framing: Framing, listener: ListenerGuard, activity: ConnectionActivity? = nil) {
        self.framing = framing
        self.listener = listener
        self.readTimeout = listener.limits.readTimeout.map { TimeAmount($0) }
        self.idleTimeout = framing == .httpRequests || activity != nil ? listener.limits.idleTimeout.map { TimeAmount($0) } : nil
        self.activity = activity
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        self.lastTraffic = now
        self.lastInput = now
        if self.framing == .httpRequests {
            // A new connection owes its first request (and, on TLS, its handshake) within the read timeout, not the
            // idle timeout: otherwise connections that never send a head, or never finish a handshake, fill the
            // listener's cap for the idle timeout each, without ever presenting a token.
            self.partialSince = now
        }
        self.arm(context)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.timer?.task.cancel()
        self.timer = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = self.unwrapInboundIn(data)
        let now = context.eventLoop.now
        self.lastTraffic = now
        self.lastInput = now
        self.wantsInput = false
        switch self.framing {
        case .lines:
            if bytes.readableBytes == 0 {
                break
            } else if bytes.getInteger(at: bytes.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\n") {
                self.partialSince = nil
            } else if Self.containsNewline(bytes) {
                // Whatever follows the last newline is a line that began just now.
                self.partialSince = now
            } else if self.partialSince == nil {
                self.partialSince = now
            }
        case .httpRequests:
            if bytes.readableBytes > 0, self.partialSince == nil { self.partialSince = now }
        }
        self.arm(context)
        context.fireChannelRead(data)
    }

    /// `memchr`, not a generic search: this runs over every byte received, and the generic search costs tens of
    /// nanoseconds a byte where it is not specialised (debug builds).
    private static func containsNewline(_ bytes: ByteBuffer) -> Bool {
        bytes.withUnsafeReadableBytes { raw in
            guard let base = raw.baseAddress else { return false }
            return memchr(base, Int32(UInt8(ascii: "\n")), raw.count) != nil
        }
    }

    package func read(context: ChannelHandlerContext) {
        if !self.wantsInput, let since = self.partialSince {
            // The time the server held back (asked for nothing since the last input) is not counted against the peer.
            self.partialSince = since + (context.eventLoop.now - self.lastInput)
        }
        self.wantsInput = true
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        self.lastTraffic = context.eventLoop.now
        context.write(data, promise: promise)
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Hummingbird ends a `Connection: close` exchange by closing its output and waiting for the peer to close:
        // a peer that keeps sending (a body nobody reads) would hold the connection half-closed, unread and so
        // untimed, for as long as it likes. Nothing more is read from a connection whose output is closed.
        context.close(mode: self.framing == .httpRequests && mode == .output ? .all : mode, promise: promise)
    }

    /// HTTP requests whose response has not ended: a connection answering one (an event stream) is not idle.
    private var requestsInProgress = 0

    /// An HTTP request's head arrived.
    func requestBegan() {
        self.requestsInProgress += 1
    }

    /// The HTTP request now arriving is whole.
    func requestCompleted() {
        self.partialSince = nil
    }

    /// A response ended.
    func responseEnded() {
        self.requestsInProgress = max(0, self.requestsInProgress - 1)
    }

    private func expiry(at now: NIODeadline) -> (Expiry?, next: NIODeadline?) {
        var next: NIODeadline?
        if let since = self.partialSince, let readTimeout {
            let due = since + readTimeout
            if due <= now, self.wantsInput { return (.read, nil) }
            next = due <= now ? now + readTimeout : due
        }
        if self.partialSince == nil, let idleTimeout {
            let due = self.lastTraffic + idleTimeout
            if due <= now, self.activity?.isHeld != true, self.requestsInProgress == 0 { return (.idle, nil) }
            let candidate = due <= now ? now + idleTimeout : due
            next = next.map { min($0, candidate) } ?? candidate
        }
        return (nil, next)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard let next = self.expiry(at: context.eventLoop.now).next else { return }
        if let timer, timer.deadline <= next { return }
        self.timer?.task.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let task = context.eventLoop.scheduleTask(deadline: next) {
            let (handler, context) = loopBound.value
            handler.fire(context)
        }
        self.timer = (next, task)
    }

    private func fire(_ context: ChannelHandlerContext) {
        self.timer = nil
        let (expired, _) = self.expiry(at: context.eventLoop.now)
        guard let expired else {
            self.arm(context)
            return
        }
        self.listener.timedOut(expired)
        context.close(promise: nil)
    }
}

/// Behind the HTTP/1.1 decoder: tells the connection's ``ReadDeadlineHandler`` when a request began, when it has
/// arrived whole, and when its response ended.
package final class HTTPRequestEndHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    private let deadline: ReadDeadlineHandler

    init(deadline: ReadDeadlineHandler) {
        self.deadline = deadline
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head: self.deadline.requestBegan()
        case .body: break
        case .end: self.deadline.requestCompleted()
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = self.unwrapOutboundIn(data) { self.deadline.responseEnded() }
        context.write(data, promise: promise)
    }
}

extension ListenerGuard {
    /// Adds the read deadline and the idle timeout to an HTTP/1.1 connection whose pipeline is set up (a
    /// ``ReadDeadlineHandler`` first, an ``HTTPRequestEndHandler`` right after the HTTP decoder). A pipeline without
    /// that decoder (HTTP/2) is left as it is: it idles out in the HTTP/2 handler.
    package func addHTTPReadDeadline(to channel: any Channel) throws {
        guard self.limits.readTimeout != nil || self.limits.idleTimeout != nil else { return }
        let pipeline = channel.pipeline.syncOperations
        guard let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        let deadline = ReadDeadlineHandler(framing: .httpRequests, listener: self)
        try pipeline.addHandler(deadline, position: .first)
        try pipeline.addHandler(HTTPRequestEndHandler(deadline: deadline), position: .after(decoder))
    }

    /// Adds the read deadline to a TLS connection whose HTTP version ALPN settles (its HTTP handlers come only after
    /// the handshake): from its first byte, the handshake and first request must arrive within the read timeout, so a
    /// handshake left half-done is closed then. Once the handshake is done, ``settleTLSReadDeadline(in:)`` ties it to
    /// the negotiated protocol.
    package func addTLSReadDeadline(to channel: any Channel) throws {
        guard self.limits.readTimeout != nil || self.limits.idleTimeout != nil else { return }
        try channel.pipeline.syncOperations.addHandler(ReadDeadlineHandler(framing: .httpRequests, listener: self), position: .first)
    }

    /// After a TLS handshake, with the negotiated protocol's handlers in place: HTTP/1.1's requests now end the
    /// deadline added by ``addTLSReadDeadline(to:)``, as on a plain connection; HTTP/2 (which idles out in its own
    /// handler, and whose requests are streams of their own) drops it.
    package func settleTLSReadDeadline(in pipeline: ChannelPipeline.SynchronousOperations) {
        guard let deadline = try? pipeline.handler(type: ReadDeadlineHandler.self) else { return }
        guard let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else {
            pipeline.removeHandler(deadline, promise: nil)
            return
        }
        if (try? pipeline.handler(type: HTTPRequestEndHandler.self)) == nil {
            try? pipeline.addHandler(HTTPRequestEndHandler(deadline: deadline), position: .after(decoder))
        }
    }
}
