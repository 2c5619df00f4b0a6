import Foundation
import RegcodeSupport
import Testing

@Suite struct JSONValueParserLimitTests {
    private static func parse(_ text: String, _ configure: (inout InputLimits) -> Void = { _ in }) throws(JSONValueParser.Failure) -> JSONValue {
        var limits = InputLimits()
        configure(&limits)
        return try JSONValueParser.parse(Array(text.utf8), limits: limits)
    }

    private static func failure(_ text: String, _ configure: (inout InputLimits) -> Void = { _ in }) -> JSONValueParser.Failure? {
        do {
            _ = try parse(text, configure)
            return nil
        } catch {
            return error
        }
    }

    private static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test func depthAtTheLimitIsReadAndOneMoreIsRefusedWhereItOpens() throws {
        var expected: JSONValue = []
        for _ in 1..<4 { expected = [expected] }
        #expect(try Self.parse(Self.nested(4)) { $0.maxDepth = 4 } == expected)
        #expect(try Self.parse(#"{"a":[{"b":[]}]}"#) { $0.maxDepth = 4 } == ["a": [["b": []]]])
        #expect(Self.failure(Self.nested(5)) { $0.maxDepth = 4 } == .limit(.maxDepth, value: 4, offset: 4))
        #expect(Self.failure(#"{"a":[{"b":[{}]}]}"#) { $0.maxDepth = 4 } == .limit(.maxDepth, value: 4, offset: 12))
    }

    @Test func aNestingBombStopsAtTheLimitWithoutExhaustingTheStack() {
        let bomb = Self.nested(1_000_000)
        #expect(Self.failure(bomb) == .limit(.maxDepth, value: 32, offset: 32))
        #expect(throws: JSONValueParser.Failure.limit(.maxDepth, value: 512, offset: 512)) { try JSONValueParser.parse(Array(bomb.utf8)) }
    }

    @Test func stringLengthAtTheLimitIsReadAndOneByteMoreIsRefusedAtItsQuote() throws {
        let limit: (inout InputLimits) -> Void = { $0.maxStringLength = 4 }
        #expect(try Self.parse(#"["abcd","éé","a\nb"]"#, limit) == ["abcd", "éé", "a\nb"])
        #expect(Self.failure(#"["abcde"]"#, limit) == .limit(.maxStringLength, value: 4, offset: 1))
        // Escapes count as written, keys like values.
        #expect(Self.failure(#""a\n\t""#, limit) == .limit(.maxStringLength, value: 4, offset: 0))
        #expect(Self.failure(#"{"abcde":1}"#, limit) == .limit(.maxStringLength, value: 4, offset: 1))
        // An unterminated string at the limit is a limit, not a syntax error: the limit is met first.
        #expect(Self.failure(#""abcdef"#, limit) == .limit(.maxStringLength, value: 4, offset: 0))
    }

    @Test func numberLengthAtTheLimitIsReadAndOneCharacterMoreIsRefusedAtItsStart() throws {
        let limit: (inout InputLimits) -> Void = { $0.maxNumberLength = 4 }
        #expect(try Self.parse("[-1.5,1234,1e10]", limit) == [-1.5, 1234, .double(1e10)])
        #expect(Self.failure("[0,12345]", limit) == .limit(.maxNumberLength, value: 4, offset: 3))
        #expect(Self.failure("-1.25", limit) == .limit(.maxNumberLength, value: 4, offset: 0))
    }

    @Test func memberAndElementCountsAtTheLimitAreReadAndOneMoreIsRefusedWhereItBegins() throws {
        let limit: (inout InputLimits) -> Void = {
            $0.maxObjectMembers = 2
            $0.maxArrayElements = 3
        }
        #expect(try Self.parse(#"{"a":[1,2,3],"b":{"c":[],"d":{}}}"#, limit) == ["a": [1, 2, 3], "b": ["c": [], "d": [:]]])
        #expect(Self.failure(#"{"a":1,"b":2,"c":3}"#, limit) == .limit(.maxObjectMembers, value: 2, offset: 13))
        #expect(Self.failure("[1,2,3,4]", limit) == .limit(.maxArrayElements, value: 3, offset: 7))
        // Counted per container: a sibling does not add to its neighbour's count.
        #expect(try Self.parse("[[1,2,3],[4,5,6],[7,8,9]]", limit).arrayValue?.count == 3)
        // Counted when the element begins, so a trailing comma past the limit is the limit.
        #expect(Self.failure("[1,2,3,]", limit) == .limit(.maxArrayElements, value: 3, offset: 7))
    }

    @Test func valueCountAtTheLimitIsReadAndOneMoreIsRefusedWhereItBegins() throws {
        let limit: (inout InputLimits) -> Void = { $0.maxValues = 5 }
        // The document, its three elements and the object's value: 5 values; keys are not values.
        #expect(try Self.parse(#"[1,{"a":"x"},[]]"#, limit) == [1, ["a": "x"], []])
        #expect(Self.failure(#"[1,{"a":"x"},[],2]"#, limit) == .limit(.maxValues, value: 5, offset: 16))
        #expect(Self.failure("[[[[[[]]]]]]", limit) == .limit(.maxValues, value: 5, offset: 5))
        #expect(InputLimits().maxValues == 16_384)
        #expect(InputLimits.nestingOnly.maxValues == .max)
    }

    @Test func withoutLimitsOnlyNestingIsBounded() throws {
        let long = String(repeating: "x", count: 200_000)
        let many = "[" + Array(repeating: "1", count: 5_000).joined(separator: ",") + "]"
        #expect(try JSONValueParser.parse(Array("\"\(long)\"".utf8)) == .string(long))
        #expect(try JSONValueParser.parse(Array(many.utf8)).arrayValue?.count == 5_000)
        #expect(Self.failure("\"\(long)\"") == .limit(.maxStringLength, value: 64 << 10, offset: 0))
        #expect(Self.failure(many) == .limit(.maxArrayElements, value: 1024, offset: 2049))
    }

    @Test func syntaxErrorsNameWhatAndWhere() {
        let cases: [(String, String)] = [
            (#"{"a":"#, "Unexpected end of file at byte 5"),
            ("[1,]", "Unexpected character ']' at byte 3, expected a value"),
            ("{1:2}", "Unexpected character '1' at byte 1, expected a string key"),
            (#"{"a" 1}"#, "Unexpected character '1' at byte 5, expected ':'"),
            ("[1 2]", "Unexpected character '2' at byte 3, expected ',' or ']'"),
            ("1\u{0}", "Unexpected character byte 0x0 at byte 1, expected nothing after the value"),
            ("tru", "Unexpected end of file at byte 3"),
            ("trUe", "Invalid literal at byte 0 (expected 'true')"),
            ("1.", "Unexpected end of file at byte 2"),
            ("1.x", "Unexpected character 'x' at byte 2, expected a digit"),
            ("\"a\tb\"", "Unescaped control character 0x9 in a string at byte 2"),
            (#""\x""#, "Invalid escape at byte 1"),
            (#""\u12G4""#, "Invalid \\u escape at byte 1"),
            ("\"open", "Unexpected end of file in the string at byte 0"),
            ("\"\\", "Unexpected end of file in an escape at byte 1"),
        ]
        for (text, message) in cases {
            #expect(Self.failure(text) == .syntax(message), "\(text.debugDescription)")
        }
    }

    /// What the grammar allows but `JSONValue` cannot hold is worded as Foundation's reader words it, which
    /// answered these on the control socket before.
    @Test(arguments: [
        #""\ud800""#, #""a\ud800""#, #"["\ud800"]"#, #""\ud83d alone""#, #""\ud800\u0041""#, #""\ud800\ud800""#, #""\udc00""#,
        #"{"\udc00\ud800":1}"#, "1e400", "[-1E400]", "1.7976931348623159e308", #"[1e400, "\udc00"]"#,
    ])
    func unrepresentableValuesAreWordedAsFoundationWordsThem(_ text: String) throws {
        let failure = try #require(Self.failure(text))
        let foundation = #expect(throws: (any Error).self) {
            try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        }
        let message = try #require((foundation as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String)
        #expect(failure == .syntax(message))
    }

    @Test func aGrammarErrorAfterAnUnrepresentableValueWins() {
        #expect(Self.failure(#"["\udc00", 1e400, ]"#) == .syntax("Unexpected character ']' at byte 18, expected a value"))
        #expect(Self.failure(#"["\udc00", 1e400, "abcdefg"]"#) { $0.maxStringLength = 6 } == .limit(.maxStringLength, value: 6, offset: 18))
    }

    @Test func surrogatePairsJoin() throws {
        #expect(try Self.parse(#""\ud83d\ude00 \uD800\uDC00""#) == "😀 \u{10000}")
    }
}
