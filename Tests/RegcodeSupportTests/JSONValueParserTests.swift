import Foundation
import RegcodeSupport
import Testing

@Suite struct JSONValueParserTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONValueParser.parse(Array(text.utf8))
    }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(
            #" { "s": "text", "i": -42, "d": 1.5, "e": 2E3, "t": true, "f": false, "n": null, "a": [1, "two", [], {}], "o": {"k": 0} } "#
        )
        #expect(
            value
                == .object([
                    "s": "text", "i": -42, "d": 1.5, "e": .double(2000), "t": true, "f": false, "n": .null,
                    "a": [1, "two", .array([]), .object([:])], "o": ["k": 0],
                ])
        )
    }

    @Test func agreesWithFoundationOnBackendAnswers() throws {
        let answers = [
            #"{"code":"X7K2P9","sessionId":"1b7c","notAfter":"1733737089035","parameters":{"mvpd":"Cablevision"}}"#,
            #"{"profiles":{"Cablevision":{"notAfter":1733737089035,"attributes":{"userID":"u-1"}}}}"#,
            #"{"status":403,"code":"authorization_denied_by_mvpd","message":"Denied \u00e9 \ud83d\ude00 \"quoted\" \\ \/ \n"}"#,
            #"{"client_id":"abc","client_secret":"s3cr\u0000et","expires_in":86400,"list":[true,false,null,-0,0.25]}"#,
            "[\"caf\u{e9} \u{1F600} \u{4E2D}\"]",
        ]
        for answer in answers {
            let ours = try parse(answer)
            let foundation = try JSONDecoder().decode(FoundationJSON.self, from: Data(answer.utf8)).value
            #expect(ours == foundation, "\(answer)")
        }
    }

    @Test func keepsIntegersExactAndMovesLargeOnesToDouble() throws {
        #expect(try parse("9223372036854775807") == .int(Int64.max))
        #expect(try parse("-9223372036854775808") == .int(Int64.min))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("1.0") == .double(1))
        #expect(try parse("1e-2") == .double(0.01))
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "True",
        "\"unterminated", "\"bad \\x escape\"", "\"\\u12G4\"", "\"\\ud83d alone\"", "\"\\udc00\"", "\"tab\there\"", "[1] 2",
        "1e400", "NaN", "'single'",
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect(throws: JSONValueParser.Failure.self) { try parse(text) }
        #expect(JSONValue(parsing: Array(text.utf8)) == nil)
    }

    @Test func refusesInvalidUTF8AndSaysWhere() {
        let bytes: [UInt8] = Array("{\"k\":\"ab".utf8) + [0xC3, 0x28] + Array("\"}".utf8)
        #expect(throws: JSONValueParser.Failure.syntax("Invalid UTF-8 at byte 8")) { try JSONValueParser.parse(bytes) }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: JSONValueParser.maximumDepth) + String(repeating: "]", count: JSONValueParser.maximumDepth)
        _ = try parse(deep)
        let tooDeep = "[" + deep + "]"
        #expect(throws: JSONValueParser.Failure.self) { try parse(tooDeep) }
    }

    @Test func lastDuplicateKeyWins() throws {
        #expect(try parse(#"{"a":1,"a":2}"#) == ["a": 2])
    }

    @Test func readsDataAndNonContiguousCollections() throws {
        #expect(JSONValue(parsing: Data(#"{"a":[1]}"#.utf8)) == ["a": [1]])
        #expect(JSONValue(parsing: #"{"a":[1]}"#.utf8) == ["a": [1]])
    }
}
