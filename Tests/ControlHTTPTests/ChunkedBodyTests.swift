import ControlSocket
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import NIOPosix
import RegcodeSupport
import Testing

@testable import ControlHTTP

/// A `POST /rpc` body in many small chunks costs about what copying it does: the parts of one read reach the
/// handler as one.
@Suite struct ChunkedBodyTests {
    private static let head = HTTPRequest(method: .post, scheme: nil, authority: "127.0.0.1", path: "/rpc")

    @Test func thePartsOfOneReadReachTheHandlerAsOne() throws {
        let channel = EmbeddedChannel()
        let coalescer = RequestBodyCoalescer()
        try channel.pipeline.syncOperations.addHandler(coalescer)
        try channel.writeInbound(HTTPRequestPart.head(Self.head))
        let body = Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":["\u00e9"]}"#.utf8)
        // One read's worth: the decoder hands each 1-byte chunk on by itself, with no read-complete between them.
        for byte in body {
            channel.pipeline.fireChannelRead(HTTPRequestPart.body(ByteBuffer(bytes: [byte])))
        }
        channel.pipeline.fireChannelRead(HTTPRequestPart.end(nil))
        channel.pipeline.fireChannelReadComplete()

        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .head(Self.head))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .body(ByteBuffer(bytes: body)))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
        #expect(coalescer.partsIn == body.count)
        #expect(coalescer.partsOut == 1)
        _ = try channel.finish()
    }

    @Test func eachReadPassesItsPartsOnWhenItCompletes() throws {
        let channel = EmbeddedChannel()
        let coalescer = RequestBodyCoalescer()
        try channel.pipeline.syncOperations.addHandler(coalescer)
        try channel.writeInbound(HTTPRequestPart.head(Self.head))
        for read in ["ab", "cde"] {
            for byte in read.utf8 { channel.pipeline.fireChannelRead(HTTPRequestPart.body(ByteBuffer(bytes: [byte]))) }
            channel.pipeline.fireChannelReadComplete()
        }
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .head(Self.head))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .body(ByteBuffer(string: "ab")))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .body(ByteBuffer(string: "cde")))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .end(nil))
        #expect((coalescer.partsIn, coalescer.partsOut) == (5, 2))
        _ = try channel.finish()
    }

    @Test func aBodyInOneByteChunksIsAnsweredOverARealConnection() async throws {
        let handler = FakeControlHandler()
        var configuration = HTTPControlServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = 64 << 10
        let server = HTTPControlServer(configuration: configuration, handler: handler, logger: Logger(label: "test"))
        let app = Application(
            router: server.makeRouter(),
            server: .http1(configuration: HTTPControlServer.http1Configuration),
            configuration: .init(address: .hostname("127.0.0.1", port: 0))
        )
        let params = "[" + Array(repeating: #"{"k":"\u00e9\ud83d\ude00","n":[1,2]}"#, count: 100).joined(separator: ",") + "]"
        let body = Array(#"{"jsonrpc":"2.0","id":9,"method":"echo","params":\#(params)}"#.utf8)
        var request = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        request += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        for byte in body { request += "1\r\n" + String(decoding: [byte], as: UTF8.self) + "\r\n" }
        request += "0\r\n\r\n"
        let wire = request
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let response = try await Self.exchange(wire, port: port)
            let answer = try #require(response.split(separator: "\r\n\r\n", maxSplits: 1).last)
            let reply = try JSONValueParser.parse(Array(answer.utf8), numbers: .integralAsInt)
            #expect(response.hasPrefix("HTTP/1.1 200"))
            #expect(reply["id"] == 9)
            #expect(reply["result"] == (try JSONValueParser.parse(Array(params.utf8), numbers: .integralAsInt)))
        }
        #expect(handler.calls == ["echo"])
    }

    /// Writes `request` in one piece and reads until the server closes.
    private static func exchange(_ request: String, port: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received = ByteBuffer()
            for try await var chunk in inbound { received.writeBuffer(&chunk) }
            return String(buffer: received)
        }
    }
}
