import ControlRPC
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
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

    @Test func aBodyPaysForItsPartsAndEachByteIsCopiedOnce() throws {
        let channel = EmbeddedChannel()
        let coalescer = RequestBodyCoalescer()
        try channel.pipeline.syncOperations.addHandler(coalescer)
        try channel.writeInbound(HTTPRequestPart.head(Self.head))
        // Parts of 128 bytes pay for themselves: a 4 MB body in them is taken whole, one read at a time.
        let part = ByteBuffer(repeating: UInt8(ascii: "x"), count: RequestBodyCoalescer.bytesPerPart)
        for _ in 0..<64 {
            for _ in 0..<512 { channel.pipeline.fireChannelRead(HTTPRequestPart.body(part)) }
            channel.pipeline.fireChannelReadComplete()
        }
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(coalescer.partsIn == 64 * 512)
        #expect(coalescer.partsOut == 64)
        // The first part of each read is kept as it came; every other byte is copied once.
        #expect(coalescer.bytesCopied == 64 * 511 * RequestBodyCoalescer.bytesPerPart)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aBodyInPartsTooSmallForItsSizeIsRefusedAtTheFirstPartItCannotPayFor() throws {
        let channel = EmbeddedChannel()
        let coalescer = RequestBodyCoalescer()
        try channel.pipeline.syncOperations.addHandler(coalescer)
        try channel.writeInbound(HTTPRequestPart.head(Self.head))
        // 1-byte chunks: after the free parts, each byte pays for 1/128 of a part.
        let allowed = RequestBodyCoalescer.freeParts + (RequestBodyCoalescer.freeParts + 8) / RequestBodyCoalescer.bytesPerPart
        var refusal: RequestBodyCoalescer.TooFinelyChunked?
        for _ in 0..<(1 << 20) {
            channel.pipeline.fireChannelRead(HTTPRequestPart.body(ByteBuffer(string: "x")))
            do {
                try channel.throwIfErrorCaught()
            } catch let error as RequestBodyCoalescer.TooFinelyChunked {
                refusal = error
                break
            }
        }
        #expect(refusal == RequestBodyCoalescer.TooFinelyChunked(parts: allowed + 1, bytes: allowed + 1))
        // What follows the refusal is not looked at, let alone passed on.
        for _ in 0..<1000 { channel.pipeline.fireChannelRead(HTTPRequestPart.body(ByteBuffer(string: "x"))) }
        channel.pipeline.fireChannelRead(HTTPRequestPart.end(nil))
        channel.pipeline.fireChannelReadComplete()
        #expect(coalescer.partsIn == allowed + 1)
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .head(Self.head))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    private static func server(_ handler: FakeControlHandler) -> HTTPControlServer {
        var configuration = HTTPControlServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = 1 << 20
        return HTTPControlServer(configuration: configuration, handler: handler, logger: Logger(label: "test"))
    }

    private static func chunked(_ body: [UInt8], size: Int) -> String {
        var request = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        request += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        var offset = 0
        while offset < body.count {
            let chunk = body[offset..<min(body.count, offset + size)]
            request += String(chunk.count, radix: 16) + "\r\n" + String(decoding: chunk, as: UTF8.self) + "\r\n"
            offset += size
        }
        return request + "0\r\n\r\n"
    }

    @Test func aSmallBodyInOneByteChunksIsAnsweredOverARealConnection() async throws {
        let handler = FakeControlHandler()
        let params = "[" + Array(repeating: #"{"k":"\u00e9\ud83d\ude00","n":[1,2]}"#, count: 20).joined(separator: ",") + "]"
        let body = Array(#"{"jsonrpc":"2.0","id":9,"method":"echo","params":\#(params)}"#.utf8)
        #expect(body.count <= RequestBodyCoalescer.freeParts)
        try await Self.server(handler).makeApplication().test(.live) { client in
            let response = try await RawHTTP.exchange(Self.chunked(body, size: 1), port: try #require(client.port))
            let answer = try #require(response.split(separator: "\r\n\r\n", maxSplits: 1).last)
            let reply = try JSONValueParser.parse(Array(answer.utf8), numbers: .integralAsInt)
            #expect(response.hasPrefix("HTTP/1.1 200"))
            #expect(reply["id"] == 9)
            #expect(reply["result"] == (try JSONValueParser.parse(Array(params.utf8), numbers: .integralAsInt)))
        }
        #expect(handler.calls == ["echo"])
    }

    @Test func aLargeBodyInOneByteChunksIsRefusedAndALargeOneInRealChunksIsAnswered() async throws {
        let handler = FakeControlHandler()
        let params = #""\#(String(repeating: "x", count: 60_000))""#
        let body = Array(#"{"jsonrpc":"2.0","id":9,"method":"echo","params":[\#(params)]}"#.utf8)
        try await Self.server(handler).makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let refused = try await RawHTTP.exchange(Self.chunked(body, size: 1), port: port)
            #expect(refused.hasPrefix("HTTP/1.1 400"))
            #expect(refused.contains(#""inputLimit":"bytesPerPart""#))
            let answered = try await RawHTTP.exchange(Self.chunked(body, size: 512), port: port)
            #expect(answered.hasPrefix("HTTP/1.1 200"))
            #expect(answered.contains(#""id":9"#))
        }
        #expect(handler.calls == ["echo"])
    }
}
