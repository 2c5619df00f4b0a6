import NIOCore
import RegcodeSupport
import Testing

@testable import ControlSocket

/// What a hostile line costs the daemon before it is answered, counted rather than timed (a busy machine cannot blur
/// a count): framing searches each byte received once, whatever the reads, and the parser reads a refused line only
/// up to where it breaks a limit, at most three units of work a byte. CPU figures per MB are in
/// `Benchmarks/socket-input/hostile-cost.py` and its README.
@Suite struct HostileCostTests {
    static func request(_ params: String) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":\#(params)}"#.utf8)
    }

    static func chain(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// Each hostile shape, and the most bytes the parser may read of it: where the limit it breaks is reached (plus
    /// the envelope and the value under way), or all of it when it is legal.
    static let shapes: [(name: String, line: [UInt8], readAtMost: Int)] = [
        // The issue's line: 33 KB nested 16,000 deep, refused where the 33rd level opens.
        ("nesting 16,000 deep", request(chain(16_000)), 100),
        ("nesting 500,000 deep", request(chain(500_000)), 100),
        ("wide array", request("[" + String(repeating: "0,", count: 499_999) + "0]"), 2 * 1024 + 100),
        (
            "wide object",
            request("{" + (0..<90_000).map { #""k\#($0)":0"# }.joined(separator: ",") + "}"),
            12 * 1024 + 100
        ),
        ("long number", request(String(repeating: "1", count: 1_000_000)), 64 + 100),
        ("long string of escapes", request("\"" + String(repeating: #"\n"#, count: 500_000) + "\""), 64 * 1024 + 100),
        ("whitespace", Array(repeating: UInt8(ascii: " "), count: 1_000_000), 1_000_000),
        (
            "escapes, legal",
            request(
                "[" + Array(repeating: "\"" + String(repeating: #"\u00e9\ud83d\ude00\n"#, count: 3200) + "\"", count: 16).joined(separator: ",") + "]"
            ),
            1 << 20
        ),
    ]

    /// Frames `bytes` + newline as reads of `readSize` bytes would bring them; the frames and the bytes searched.
    static func frame(_ bytes: [UInt8], readSize: Int) -> (frames: [LineFrame], searched: Int) {
        var decoder = LineFrameDecoder(maxLineLength: 1 << 20)
        var buffer = ByteBuffer()
        var frames: [LineFrame] = []
        let wire = bytes + [UInt8(ascii: "\n")]
        var offset = 0
        while offset < wire.count {
            let end = min(wire.count, offset + readSize)
            buffer.writeBytes(wire[offset..<end])
            offset = end
            while let frame = decoder.nextFrame(&buffer) { frames.append(frame) }
        }
        return (frames, decoder.searchedBytes)
    }

    @Test(arguments: shapes.indices, [1 << 11, 1 << 16])
    func eachHostileShapeCostsLinearlyAndARefusedOneOnlyUpToItsLimit(shape: Int, readSize: Int) throws {
        let (name, line, readAtMost) = Self.shapes[shape]
        let (frames, searched) = Self.frame(line, readSize: readSize)
        #expect(searched == line.count + 1, "\(name): each byte searched once for the newline")
        guard case .line(let framed)? = frames.first, frames.count == 1 else {
            Issue.record("\(name): framed as \(frames)")
            return
        }
        var work = JSONValueParser.Work()
        _ = try? JSONValueParser.parse(framed.readableBytesView, limits: InputLimits(), numbers: .integralAsInt, work: &work)
        #expect(work.bytes <= readAtMost, "\(name): read \(work.bytes) of \(line.count) bytes")
        #expect(work.total <= 3 * max(work.bytes, 1), "\(name): \(work) for \(work.bytes) bytes read")
    }

    @Test func aLineOverTheLimitIsSkippedWithoutBeingKeptAndEachByteIsSearchedOnce() {
        let line = Array(repeating: UInt8(ascii: "x"), count: 3 << 20)
        for readSize in [1 << 11, 1 << 16] {
            let (frames, searched) = Self.frame(line, readSize: readSize)
            #expect(frames == [.tooLong(byteCount: line.count + 1)])
            #expect(searched == line.count + 1)
        }
    }
}
