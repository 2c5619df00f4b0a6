import Foundation
import RegcodeSupport
import Testing

@Suite struct JSONWriterTests {
    @Test func objectKeysAreSortedByTheirBytesAndNothingIsEscapedNeedlessly() {
        let value: JSONValue = ["b": 1, "a": ["x/y", 2.5, nil, true], "B": .double(.nan), "é": "\"\n\u{1}"]
        #expect(JSONWriter.text(value) == #"{"B":null,"a":["x/y",2.5,null,true],"b":1,"é":"\"\n\u0001"}"#)
    }

    @Test func membersKeepTheOrderTheyWereWrittenInAndIndentLikeTheReport() {
        var json = JSONWriter(layout: .indented(2))
        json.object { json in
            json.key("z")
            json.int(1)
            json.key("a")
            json.array { json in
                json.raw("1.5")
                json.object { _ in }
            }
            json.key("e")
            json.array { _ in }
        }
        #expect(json.text == "{\n  \"z\": 1,\n  \"a\": [\n    1.5,\n    {}\n  ],\n  \"e\": []\n}")
    }

    @Test func compactOutputDecodesBackToTheSameValue() throws {
        let value: JSONValue = ["n": .int(Int64.max), "s": "tab\there", "list": [[:], [], "\u{7f}"]]
        let decoded = try JSONDecoder().decode(FoundationJSON.self, from: Data(JSONWriter.text(value).utf8)).value
        #expect(decoded == value)
    }
}
