import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// The wires a pool speaks; every behaviour test runs on each.
enum TestWire: String, CaseIterable, Sendable {
    case plain
    case tlsHTTP1
    case tlsHTTP2

    var usesTLS: Bool { self != .plain }
    var scheme: String { usesTLS ? "https" : "http" }
}

/// The server needs a certificate for a TLS wire.
struct MissingServerCertificate: Error {}

/// A loopback server whose answer depends on the request path, to drive the pool through what real servers do:
/// `/ok` answers and keeps the connection, `/close` answers and closes (`Connection: close`, or a GOAWAY on HTTP/2),
/// `/stall` never answers, `/big` announces a body larger than any test's limit, `/drop` closes without answering
/// (resets the stream on HTTP/2), `/drop-once` and `/refuse-once` do so the first time only (on HTTP/2 a GOAWAY
/// naming no stream, and a `REFUSED_STREAM` reset).
/// It speaks plain HTTP/1.1, or TLS with HTTP/1.1 or HTTP/2 by ALPN, counts the connections it accepted and records
/// every request head it read and the SNI names it was sent.
final class ScriptedServer: Sendable {
    fileprivate final class Record: Sendable {
        let state = Mutex<(accepted: Int, heads: [String], serverNames: [String?], peers: [String])>((0, [], [], []))
        let connections = Mutex<[any Channel]>([])
        let dropsLeft = Atomic<Int>(1)

        func head(_ head: String) { state.withLock { $0.heads.append(head) } }
    }

    private let channel: any Channel
    private let record = Record()

    var port: Int { channel.localAddress!.port! }
    var accepted: Int { record.state.withLock { $0.accepted } }
    var heads: [String] { record.state.withLock { $0.heads } }
    /// The SNI name of each TLS connection (nil: none sent).
    var serverNames: [String?] { record.state.withLock { $0.serverNames } }
    /// The peer (client) address of each accepted connection, in order.
    var peers: [String] { record.state.withLock { $0.peers } }

    /// - Parameters:
    ///   - wire: What it speaks; TLS wires need `tls`.
    ///   - tls: Its certificate, and the client CA that makes it ask for (and require) a client certificate.
    init(wire: TestWire = .plain, tls: TLSConfiguration? = nil) async throws {
        let record = self.record
        let context: NIOSSLContext?
        if wire.usesTLS {
            guard var configuration = tls else { throw MissingServerCertificate() }
            configuration.applicationProtocols = wire == .tlsHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
            context = try NIOSSLContext(configuration: configuration)
        } else {
            context = nil
        }
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                record.state.withLock {
                    $0.accepted += 1
                    $0.peers.append(child.remoteAddress?.ipAddress ?? "?")
                }
                record.connections.withLock { $0.append(child) }
                guard let context else {
                    return child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(ScriptedHandler(record: record))
                    }
                }
                return child.eventLoop.makeCompletedFuture {
                    let sync = child.pipeline.syncOperations
                    try sync.addHandler(
                        ByteToMessageHandler(
                            SNIHandler { result in
                                switch result {
                                case .hostname(let name): record.state.withLock { $0.serverNames.append(name) }
                                case .fallback: record.state.withLock { $0.serverNames.append(nil) }
                                }
                                return child.eventLoop.makeSucceededVoidFuture()
                            }
                        )
                    )
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                    try sync.addHandler(ALPNSwitch(record: record))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// Closes every connection the server holds (as a server's idle timeout does).
    func closeConnections() async {
        let open = record.connections.withLock { $0 }
        for connection in open { try? await connection.close() }
    }

    func stop() async {
        await closeConnections()
        try? await channel.close()
    }
}

/// After the handshake: the raw HTTP/1.1 script, or HTTP/2 with the script on each stream.
private final class ALPNSwitch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let record: ScriptedServer.Record

    init(record: ScriptedServer.Record) {
        self.record = record
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted(let negotiated) = event as? TLSUserEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        let sync = context.pipeline.syncOperations
        let record = self.record
        sync.removeHandler(self, promise: nil)
        if negotiated == "h2" {
            _ = try? sync.configureHTTP2Pipeline(mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try stream.pipeline.syncOperations.addHandler(ScriptedStreamHandler(record: record))
                }
            }
        } else {
            try? sync.addHandler(ScriptedHandler(record: record))
        }
    }
}

/// The script on raw HTTP/1.1 bytes.
private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var pending = ByteBuffer()
    private let record: ScriptedServer.Record

    init(record: ScriptedServer.Record) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = unwrapInboundIn(data)
        pending.writeBuffer(&part)
        // Test requests carry no body: a head ends at the blank line.
        while let end = pending.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) {
            let headLength = end.lowerBound - pending.readerIndex
            let head = pending.readString(length: headLength) ?? ""
            pending.moveReaderIndex(forwardBy: 4)
            record.head(head)
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            respond(to: path, context: context)
        }
    }

    private func respond(to path: String, context: ChannelHandlerContext) {
        switch path {
        case "/stall":
            break
        case "/drop":
            context.close(promise: nil)
        case "/drop-once", "/refuse-once":
            if record.dropsLeft.subtract(1, ordering: .relaxed).newValue >= 0 {
                context.close(promise: nil)
            } else {
                write("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}", context: context)
            }
        case "/big":
            write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", context: context)
        case "/close":
            write("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno", context: context)
            context.close(promise: nil)
        default:
            write("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}", context: context)
        }
    }

    private func write(_ text: String, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }
}

/// The script on one HTTP/2 stream.
private final class ScriptedStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let record: ScriptedServer.Record
    private var path = "/"

    init(record: ScriptedServer.Record) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
            let fields = head.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\r\n")
            record.head("\(head.method) \(head.uri) HTTP/2\r\n\(fields)")
        case .body:
            break
        case .end:
            respond(context: context)
        }
    }

    private func respond(context: ChannelHandlerContext) {
        switch path {
        case "/stall":
            break
        case "/drop":
            context.close(promise: nil)
        case "/drop-once" where record.dropsLeft.subtract(1, ordering: .relaxed).newValue >= 0:
            // A GOAWAY naming no stream, as a server draining for a reload sends: this request was not processed and
            // may go out again (RFC 9113 §6.8). Written as bytes under the HTTP/2 handler: NIOHTTP2 would reset the
            // streams above the last one itself, which servers such as nginx do not do.
            guard let parent = context.channel.parent,
                let below = try? parent.pipeline.syncOperations.context(handlerType: NIOHTTP2Handler.self)
            else { return }
            let frame: [UInt8] = [0, 0, 8, 0x7, 0, 0, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0]
            below.writeAndFlush(NIOAny(ByteBuffer(bytes: frame)), promise: nil)
        case "/refuse-once" where record.dropsLeft.subtract(1, ordering: .relaxed).newValue >= 0:
            // RST_STREAM REFUSED_STREAM: not processed either (RFC 9113 §8.7).
            guard let parent = context.channel.parent, let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            else { return }
            parent.writeAndFlush(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream)), promise: nil)
        case "/big":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "100000")
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .ok, headers: headers))), promise: nil)
        case "/close":
            answer(status: .serviceUnavailable, body: "no", extra: [("Retry-After", "7")], context: context)
            goAway(context: context, lastStream: .maxID)
        default:
            answer(status: .ok, body: "{\"ok\":true}", extra: [], context: context)
        }
    }

    private func answer(status: HTTPResponseStatus, body: String, extra: [(String, String)], context: ChannelHandlerContext) {
        var headers = HTTPHeaders(extra)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func goAway(context: ChannelHandlerContext, lastStream: HTTP2StreamID) {
        guard let parent = context.channel.parent else { return }
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStream, errorCode: .noError, opaqueData: nil))
        parent.writeAndFlush(frame).whenComplete { _ in parent.close(promise: nil) }
    }
}
