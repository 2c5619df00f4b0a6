import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client connection written by hand, so that a test decides every byte and when it is sent, and sees
/// when the server closes.
struct RawHTTP: Sendable {
    let inbound: NIOAsyncChannelInboundStream<ByteBuffer>
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// Runs `body` on a new connection to `port` on loopback, closing it afterwards.
    static func withConnection<Result: Sendable>(
        port: Int,
        _ body: (RawHTTP) async throws -> Result
    ) async throws -> Result {
        // The client keeps its side open when the server closes its own: a test sees a server that only half-closes.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(RawHTTP(inbound: inbound, outbound: outbound))
        }
    }

    func send(_ text: String) async throws {
        try await self.outbound.write(ByteBuffer(string: text))
    }

    /// Everything the server sends until it closes the connection. A server that closes while the client still sends
    /// resets the connection (the kernel's answer to unread input): that ends the reading too, after what came before.
    func readUntilClosed() async throws -> String {
        var received = ByteBuffer()
        do {
            for try await var chunk in self.inbound { received.writeBuffer(&chunk) }
        } catch let error as IOError where error.errnoCode == ECONNRESET {
            return String(buffer: received)
        }
        return String(buffer: received)
    }

    /// Writes `request` in one piece on a connection of its own and reads until the server closes.
    static func exchange(_ request: String, port: Int) async throws -> String {
        try await withConnection(port: port) { connection in
            try await connection.send(request)
            return try await connection.readUntilClosed()
        }
    }
}
