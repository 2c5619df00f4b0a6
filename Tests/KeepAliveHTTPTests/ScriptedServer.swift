import NIOCore
import NIOPosix
import Synchronization

/// A loopback HTTP/1.1 server whose answer depends on the request path, to drive the pool through what real
/// servers do: `/ok` answers and keeps the connection, `/close` answers with `Connection: close` and closes,
/// `/stall` never answers, `/big` announces a body larger than any test's limit, `/drop` closes without answering.
/// It counts the connections it accepted and records every request head it read.
final class ScriptedServer: Sendable {
    private final class Record: Sendable {
        let state = Mutex<(accepted: Int, heads: [String])>((0, []))
        let connections = Mutex<[any Channel]>([])
    }

    private let channel: any Channel
    private let record = Record()

    var port: Int { channel.localAddress!.port! }
    var accepted: Int { record.state.withLock { $0.accepted } }
    var heads: [String] { record.state.withLock { $0.heads } }

    init() async throws {
        let record = self.record
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                record.state.withLock { $0.accepted += 1 }
                record.connections.withLock { $0.append(child) }
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(ScriptedHandler(record: { head in record.state.withLock { $0.heads.append(head) } }))
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

private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var pending = ByteBuffer()
    private let record: @Sendable (String) -> Void

    init(record: @escaping @Sendable (String) -> Void) {
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
            record(head)
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
