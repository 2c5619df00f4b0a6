import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Joins the body parts of one socket read into one part before they reach the request's body stream, and refuses a
/// body cut into parts so small that their number, not their bytes, would set its cost.
///
/// The HTTP decoder hands on each chunk of a chunked body as a part of its own, and every part that crosses into the
/// handler's async body stream costs a hand-over and a wake-up: a body sent in 1-byte chunks cost tens of
/// microseconds per byte. Joined here, the stream sees at most one part per read (the read's size bounds it), and
/// collecting the body costs about what copying it does.
///
/// Each part still costs the decoder and this handler a constant, a few hundred nanoseconds: a megabyte of 1-byte
/// chunks (six bytes each on the wire) is 170,000 of them, most of a second. So a request may bring at most
/// ``freeParts`` parts plus one per ``bytesPerPart`` bytes of its body (chunk sizes any client uses pass by orders
/// of magnitude); the part past that ends its body stream with ``TooFinelyChunked``, answered 400, and nothing more of
/// the request is read.
final class RequestBodyCoalescer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// Parts any body may arrive in, however small.
    static let freeParts = 1024
    /// Body bytes that pay for one more part.
    static let bytesPerPart = 128

    /// A body arrived in more parts than its size pays for.
    struct TooFinelyChunked: Error, Equatable {
        var parts: Int
        var bytes: Int
    }

    private var pending: ByteBuffer?
    /// Body parts received and passed on, since the connection opened: what the tests read.
    private(set) var partsIn = 0
    private(set) var partsOut = 0
    /// Body bytes copied into a joined part, since the connection opened: at most one copy of each byte received.
    private(set) var bytesCopied = 0
    /// The current request's parts and body bytes.
    private var requestParts = 0
    private var requestBytes = 0
    private var refused = false

    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = Self.unwrapInboundIn(data)
        guard case .body(var chunk) = part else {
            if case .head = part {
                self.requestParts = 0
                self.requestBytes = 0
                self.refused = false
            }
            guard !self.refused else { return }
            self.flush(context: context)
            context.fireChannelRead(data)
            return
        }
        guard !self.refused else { return }
        self.partsIn += 1
        self.requestParts += 1
        self.requestBytes += chunk.readableBytes
        guard self.requestParts <= Self.freeParts + self.requestBytes / Self.bytesPerPart else {
            self.refused = true
            self.pending = nil
            context.fireErrorCaught(TooFinelyChunked(parts: self.requestParts, bytes: self.requestBytes))
            return
        }
        if self.pending == nil {
            self.pending = chunk
        } else {
            self.bytesCopied += chunk.readableBytes
            self.pending!.writeBuffer(&chunk)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flush(context: context)
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.flush(context: context)
        context.fireChannelInactive()
    }

    private func flush(context: ChannelHandlerContext) {
        guard let body = self.pending else { return }
        self.pending = nil
        self.partsOut += 1
        context.fireChannelRead(Self.wrapInboundOut(.body(body)))
    }
}
