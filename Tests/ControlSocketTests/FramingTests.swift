import NIOCore
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import ControlRPC
@testable import ControlSocket

@Suite("Line framing and JSON encoding")
struct FramingTests {
    private func frames(_ chunks: [String], limit: Int = 16) -> [LineFrame] {
        var decoder = LineFrameDecoder(maxLineLength: limit)
        var buffer = ByteBuffer()
        var frames: [LineFrame] = []
        for chunk in chunks {
            buffer.writeString(chunk)
            while let frame = decoder.nextFrame(&buffer) { frames.append(frame) }
        }
        return frames
    }

    private func line(_ text: String) -> LineFrame { .line(ByteBuffer(string: text)) }

    @Test func splitsAtNewlinesAcrossChunksAndDropsCarriageReturns() {
        #expect(frames(["ab", "c\nde\r", "\n\nf"]) == [line("abc"), line("de"), line("")])
    }

    @Test func overLongLineIsDiscardedToItsNewlineThenDecodingContinues() {
        let frames = frames(["0123456789", "0123456789", "0123456789", "tail\nnext\n"])
        #expect(frames == [.tooLong(byteCount: 35), line("next")])
    }

    @Test func overLongLineInOneChunkIsRefusedToo() {
        #expect(frames([String(repeating: "x", count: 17) + "\nok\n"]) == [.tooLong(byteCount: 18), line("ok")])
        // Exactly the limit, with or without a carriage return, is fine.
        #expect(frames([String(repeating: "x", count: 16) + "\r\n"]) == [line(String(repeating: "x", count: 16))])
    }

    @Test func discardingNeverKeepsTheLine() {
        var decoder = LineFrameDecoder(maxLineLength: 16)
        var buffer = ByteBuffer()
        for _ in 0..<100 {
            buffer.writeString(String(repeating: "y", count: 10))
            #expect(decoder.nextFrame(&buffer) == nil)
            #expect(buffer.readableBytes <= 17)
        }
        buffer.writeString("\n")
        #expect(decoder.nextFrame(&buffer) == .tooLong(byteCount: 1001))
    }

    @Test func encodingIsCompactSortedAndEscaped() {
        let value: JSONValue = [
            "z": [1, 2.5, true, .null],
            "a": "quote\" backslash\\ newline\n tab\t bell\u{07} slash/ é",
            "m": ["nested": ["b": 1, "a": -2]],
            "nan": .double(.nan),
        ]
        let line = JSONLine.encode(value)
        #expect(
            String(buffer: line)
                == #"{"a":"quote\" backslash\\ newline\n tab\t bell\u0007 slash/ é","m":{"nested":{"a":-2,"b":1}},"nan":null,"z":[1,2.5,true,null]}"#
                + "\n"
        )
    }

    @Test func encodedLinesDecodeToTheSameValue() throws {
        let value: JSONValue = ["seq": 9_007_199_254_740_993, "text": "line\u{2028}sep 😀", "list": [[], [:]], "x": 0.1]
        var line = JSONLine.encode(value)
        line.moveWriterIndex(to: line.writerIndex - 1)
        #expect(try JSONLine.decode(line) == value)
    }

    @Test func requestValidation() throws {
        let request = try RPCRequest(["jsonrpc": "2.0", "id": "a", "method": "m", "params": .null])
        #expect(request.id == "a")
        #expect(request.method == "m")
        #expect(request.params == nil)
        let notification = try RPCRequest(["jsonrpc": "2.0", "method": "m", "params": [1]])
        #expect(notification.id == nil)
        #expect(throws: RPCRequest.Rejection(error: .invalidRequest("\"jsonrpc\" must be \"2.0\""), id: 1)) {
            try RPCRequest(["id": 1, "method": "m"])
        }
    }

    @Test func limitIsDescribedForHumans() {
        #expect(RPCError.lineTooLong(limit: 1 << 20).message == "line exceeds the 1 MiB limit and was discarded")
        #expect(RPCError.lineTooLong(limit: 200).message == "line exceeds the 200 bytes limit and was discarded")
    }
}
