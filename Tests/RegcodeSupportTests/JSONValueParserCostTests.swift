import RegcodeSupport
import Testing

/// The parser's cost is linear in its input for every shape the limits admit: the work it counts (bytes read, values
/// made, values moved into containers) stays within three units a byte, and doubling a document doubles it. CPU
/// figures are in `Benchmarks/socket-input/`; here only counts, which a busy machine cannot blur.
@Suite struct JSONValueParserCostTests {
    /// A request line whose `params` is `body`.
    static func request(_ params: String) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":\#(params)}"#.utf8)
    }

    static func list(_ count: Int, _ item: (Int) -> String) -> String {
        "[" + (0..<count).map(item).joined(separator: ",") + "]"
    }

    static func chain(depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// The worst shapes, `scale` times over, each within the default limits at scale 8.
    static let shapes: [(name: String, make: @Sendable (Int) -> [UInt8])] = [
        // Arrays 28 deep side by side: one allocation per two bytes, the costliest shape per byte.
        ("deep-wide arrays", { scale in request(list(scale) { _ in list(70) { _ in chain(depth: 26) } }) }),
        (
            "many members",
            { scale in request(list(scale) { group in "{" + (0..<1000).map { "\"k\(group)_\($0)\":\($0)" }.joined(separator: ",") + "}" }) }
        ),
        ("numbers", { scale in request(list(scale) { _ in list(1000) { "-\($0).25e-3" } }) }),
        (
            "escapes and surrogate pairs",
            { scale in request(list(scale) { _ in "\"" + String(repeating: #"\u00e9\ud83d\ude00\n\"\\"#, count: 2500) + "\"" }) }
        ),
        ("long strings", { scale in request(list(scale) { _ in "\"" + String(repeating: "abcdefghé", count: 6500) + "\"" }) }),
    ]

    static func work(_ bytes: [UInt8]) throws -> JSONValueParser.Work {
        var work = JSONValueParser.Work()
        _ = try JSONValueParser.parse(bytes, limits: InputLimits(), numbers: .integralAsInt, work: &work)
        return work
    }

    @Test(arguments: shapes.indices)
    func workIsLinearInTheInput(_ shape: Int) throws {
        let (name, make) = Self.shapes[shape]
        let single = make(4)
        let double = make(8)
        let once = try Self.work(single)
        let twice = try Self.work(double)
        #expect(once.bytes == single.count && twice.bytes == double.count, "\(name): every byte read, once")
        #expect(once.total <= 3 * single.count && twice.total <= 3 * double.count, "\(name): \(once) for \(single.count) bytes")
        // Twice the document is twice the work, give or take the envelope's few values.
        let growth = Double(twice.total) / Double(once.total)
        #expect(growth > 1.95 && growth < 2.05, "\(name): \(once.total) → \(twice.total)")
    }

    @Test func eachValueIsMovedIntoItsContainerOnce() throws {
        // 3 values in the inner array, the array and 1 in the outer; the envelope's 4 members.
        let work = try Self.work(Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[[1,2,3],{"a":[]}]}"#.utf8))
        #expect(work.values == 11)
        #expect(work.moves == 10)
    }

    @Test func aRefusedDocumentIsReadOnlyToWhereItBreaksALimit() {
        // The issue's heavy line: 17,000 arrays 28 deep, 969 KB, is refused where its 16,385th value begins.
        let line = Self.request(Self.list(17) { _ in Self.list(1000) { _ in Self.chain(depth: 26) } })
        var work = JSONValueParser.Work()
        #expect(throws: JSONValueParser.Failure.self) {
            _ = try JSONValueParser.parse(line, limits: InputLimits(), numbers: .integralAsInt, work: &work)
        }
        #expect(line.count > 900_000)
        #expect(work.bytes < 40_000)
    }
}
