import Foundation
import NIOCore
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import ControlRPC
@testable import ControlSocket

@Suite("Hostile input: limits checked while parsing")
struct HostileInputTests {
    private static func scan(_ text: String, _ configure: (inout InputLimits) -> Void = { _ in }) -> JSONValueParser.Failure? {
        var limits = InputLimits()
        configure(&limits)
        do {
            _ = try JSONValueParser.parse(ByteBuffer(string: text).readableBytesView, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    private static func bomb(depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    private static func echo(id: Int, params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"echo","params":\#(params)}"# + "\n"
    }

    // MARK: The scan itself

    static let validJSON = [
        "0", "-0", "1e10", "-0.5E-3", "2.5e+300", "123456789012345678", "true", "false", "null", #""""#, "[]", "{}",
        #"" \u00e9\uD83D\ude00 \"\\\/\b\f\n\r\t é😀""#, " \t\r\n[ 1 , { \"a\" : [ ] } ] \r", #"{"a":{"b":{"c":[null]}},"":0}"#,
    ]

    @Test(arguments: validJSON)
    func rfcValidTextPasses(_ text: String) throws {
        #expect(Self.scan(text) == nil)
        // The reference agrees.
        _ = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    static let invalidJSON = [
        "1\u{0}", "{}\u{0}", "01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, "{1:2}", "[1 2]",
        "1 2", "tru", "nul", "NaN", "Infinity", "'a'", #""\x""#, #""\u12G4""#, "\"a\tb\"", "\"open", "[", #"{"a":"#, "]", "",
        "/* */ 1",
    ]

    @Test(arguments: invalidJSON)
    func nonJSONIsASyntaxError(_ text: String) {
        guard case .syntax = Self.scan(text) else {
            Issue.record("\(text.debugDescription) was not refused as non-JSON")
            return
        }
    }

    @Test func malformedUTF8IsASyntaxError() {
        for bytes: [UInt8] in [
            [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22], [0xC3, 0xA9],
        ] {
            #expect(throws: JSONValueParser.Failure.self, "\(bytes)") {
                try JSONValueParser.parse(ByteBuffer(bytes: bytes).readableBytesView, limits: InputLimits())
            }
        }
    }

    @Test func depthLimitIsExact() {
        #expect(Self.scan(Self.bomb(depth: 4)) { $0.maxDepth = 4 } == nil)
        #expect(Self.scan(#"{"a":[{"b":[]}]}"#) { $0.maxDepth = 4 } == nil)
        #expect(Self.scan(Self.bomb(depth: 5)) { $0.maxDepth = 4 } == .limit(.maxDepth, value: 4, offset: 4))
        #expect(Self.scan(Self.bomb(depth: 100_000)) == .limit(.maxDepth, value: 32, offset: 32))
    }

    @Test func stringLimitCountsBytesAsWritten() {
        let limit: (inout InputLimits) -> Void = { $0.maxStringLength = 4 }
        #expect(Self.scan(#""abcd""#, limit) == nil)
        #expect(Self.scan(#""éé""#, limit) == nil)
        #expect(Self.scan(#""abcde""#, limit) == .limit(.maxStringLength, value: 4, offset: 0))
        #expect(Self.scan(#""ab\u0041""#, limit) == .limit(.maxStringLength, value: 4, offset: 0))
        #expect(Self.scan(#"{"abcde":1}"#, limit) == .limit(.maxStringLength, value: 4, offset: 1))
    }

    @Test func numberLimitCountsTheWholeLiteral() {
        let limit: (inout InputLimits) -> Void = { $0.maxNumberLength = 4 }
        #expect(Self.scan("-1.5", limit) == nil)
        #expect(Self.scan("[1e10]", limit) == nil)
        #expect(Self.scan("12345", limit) == .limit(.maxNumberLength, value: 4, offset: 0))
        #expect(Self.scan("[1e+10]", limit) == .limit(.maxNumberLength, value: 4, offset: 1))
    }

    @Test func memberAndElementLimitsApplyPerContainer() {
        let limit: (inout InputLimits) -> Void = {
            $0.maxObjectMembers = 2
            $0.maxArrayElements = 2
        }
        #expect(Self.scan(#"{"a":{"x":1,"y":[1,2]},"b":[[1,2],[3,4]]}"#, limit) == nil)
        #expect(Self.scan(#"{"a":1,"b":2,"c":3}"#, limit) == .limit(.maxObjectMembers, value: 2, offset: 13))
        #expect(Self.scan("[[1,2],[3,4,5]]", limit) == .limit(.maxArrayElements, value: 2, offset: 12))
    }

    @Test func defaultsAreDocumented() {
        let limits = InputLimits()
        #expect(limits.maxDepth == 32)
        #expect(limits.maxStringLength == 64 << 10)
        #expect(limits.maxNumberLength == 64)
        #expect(limits.maxObjectMembers == 1024)
        #expect(limits.maxArrayElements == 1024)
        let configuration = ControlServer.Configuration(listener: .path("/unused"))
        #expect(configuration.backlog == SOMAXCONN)
        #expect(configuration.maxPendingRequests == 64)
    }

    // MARK: Over the socket

    @Test(arguments: [512, 100_000])
    func nestingBombIsRefusedAndTheConnectionCarriesOn(depth: Int) async throws {
        let handler = TestHandler()
        try await withServer(handler: handler) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(Self.echo(id: 1, params: Self.bomb(depth: depth)))
                let refusal = try #require(try await connection.readJSON())
                #expect(refusal["id"] == .null)
                #expect(refusal["error"]?["code"] == -32600)
                #expect(refusal["error"]?["message"]?.stringValue?.contains("nesting deeper than 32 levels") == true)
                #expect(refusal["error"]?["data"] == ["limit": 32, "inputLimit": "maxDepth"])

                try await connection.send(Self.echo(id: 2, params: #"["after"]"#))
                let reply = try #require(try await connection.readJSON())
                #expect(reply["id"] == 2)
                #expect(reply["result"] == ["after"])
            }
        }
        #expect(handler.receivedMethods == ["echo"])
    }

    @Test func eachLimitIsAnsweredWithItsName() async throws {
        let limits: (inout ControlServer.Configuration) -> Void = {
            $0.inputLimits.maxStringLength = 16
            $0.inputLimits.maxNumberLength = 8
            $0.inputLimits.maxObjectMembers = 5
            $0.inputLimits.maxArrayElements = 3
        }
        try await withServer(configure: limits) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                let cases = [
                    ("maxStringLength", 16, Self.echo(id: 1, params: #"["\#(String(repeating: "s", count: 17))"]"#)),
                    ("maxNumberLength", 8, Self.echo(id: 1, params: "[123456789]")),
                    ("maxObjectMembers", 5, #"{"jsonrpc":"2.0","id":1,"method":"echo","params":{},"x":1,"y":2}"# + "\n"),
                    ("maxArrayElements", 3, Self.echo(id: 1, params: "[1,2,3,4]")),
                ]
                for (name, limit, line) in cases {
                    try await connection.send(line)
                    let refusal = try #require(try await connection.readJSON())
                    #expect(refusal["id"] == .null, "\(name)")
                    #expect(refusal["error"]?["code"] == -32600, "\(name)")
                    #expect(refusal["error"]?["data"] == ["limit": .int(Int64(limit)), "inputLimit": .string(name)])
                    #expect(refusal["error"]?["message"]?.stringValue?.contains(name) == true, "\(name)")
                }
                // Exactly at each limit is fine.
                try await connection.send(Self.echo(id: 2, params: #"["\#(String(repeating: "s", count: 16))",12345678,[1,2]]"#))
                let reply = try #require(try await connection.readJSON())
                #expect(reply["result"] == [.string(String(repeating: "s", count: 16)), 12_345_678, [1, 2]])
            }
        }
    }

    @Test func nulAfterABareNumberIsAParseError() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                for line in ["1\u{0}\n", #"{"jsonrpc":"2.0","id":1,"method":"echo"}"# + "\u{0}\n", "[1] x\n"] {
                    try await connection.send(line)
                    let refusal = try #require(try await connection.readJSON())
                    #expect(refusal["id"] == .null, "\(line.debugDescription)")
                    #expect(refusal["error"]?["code"] == -32700, "\(line.debugDescription)")
                }
                try await connection.send(Self.echo(id: 3, params: "[3]"))
                #expect(try await connection.readJSON()?["result"] == [3])
            }
        }
    }

    @Test func rfcValidEdgeValuesAreServed() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                // The request object is level 1, so params may nest 31 deep.
                try await connection.send(Self.echo(id: 1, params: Self.bomb(depth: 31)))
                var expected: JSONValue = []
                for _ in 1..<31 { expected = [expected] }
                #expect(try await connection.readJSON()?["result"] == expected)

                try await connection.send(Self.echo(id: 2, params: #" [ "\u00e9\ud83d\ude00\/" , 1E3 , -0.25e-2 , 0 , 9223372036854775807 ] "#))
                let reply = try #require(try await connection.readJSON())
                let values = try #require(reply["result"]?.arrayValue)
                try #require(values.count == 5)
                #expect(values[0] == "é😀/")
                #expect(values[1].intValue == 1000)
                #expect(values[2] == .double(-0.0025))
                #expect(values[3] == 0)
                #expect(values[4] == .int(.max))
            }
        }
    }

    @Test func otherClientsAreAnsweredWhileOneSendsNestingBombs() async throws {
        let bombs = 20
        let calls = 50
        try await withServer { _, path in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await withRawConnection(to: path) { (attacker: inout RawConnection) async throws in
                        let line = Self.echo(id: 0, params: Self.bomb(depth: 100_000))
                        try await attacker.send(String(repeating: line, count: bombs))
                        for _ in 0..<bombs {
                            #expect(try await attacker.readJSON()?["error"]?["code"] == -32600)
                        }
                        try await attacker.send(Self.echo(id: 1, params: "[1]"))
                        #expect(try await attacker.readJSON()?["id"] == 1)
                    }
                }
                group.addTask {
                    try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                        var answers: [JSONValue] = []
                        for index in 0..<calls {
                            answers.append(try await client.call(method: "echo", params: [.int(Int64(index))]))
                        }
                        #expect(answers == (0..<calls).map { [.int(Int64($0))] })
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func pipelinedRequestsWithoutReadingAreAllAnsweredInOrder() async throws {
        let total = 5_000
        let handler = TestHandler()
        let padding = String(repeating: "p", count: 512)
        let backlog: (inout ControlServer.Configuration) -> Void = { $0.maxPendingRequests = 8 }
        try await withServer(handler: handler, configure: backlog) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                let outbound = connection.outbound
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for id in 0..<total {
                            try await outbound.write(ByteBuffer(string: Self.echo(id: id, params: #"["\#(padding)"]"#)))
                        }
                    }
                    // Let the server fill its output and stop reading before anything is read here.
                    #expect(try await eventually(timeout: .seconds(120)) { handler.receivedMethods.count >= 100 })
                    var ids: [JSONValue] = []
                    for _ in 0..<total {
                        let reply = try #require(try await connection.readJSON())
                        ids.append(reply["id"] ?? .null)
                        #expect(reply["result"] == [.string(padding)])
                    }
                    #expect(ids == (0..<total).map { .int(Int64($0)) })
                    try await group.waitForAll()
                }
            }
        }
        #expect(handler.receivedMethods.count == total)
    }
}

@Suite("Hostile input: the refusal texts")
struct HostileInputRefusalTextTests {
    private static func rejection(_ line: String, _ configure: (inout InputLimits) -> Void = { _ in }) -> RPCRequest.Rejection? {
        var limits = InputLimits()
        configure(&limits)
        do {
            _ = try RPCRequest(line: ByteBuffer(string: line), limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func grammarAndValueErrorsAreParseErrorsWithTheirReason() {
        let cases: [(String, String)] = [
            (#"{"jsonrpc":"2.0","id":1,"method":"#, "parse error: Unexpected end of file at byte 33"),
            ("[1] x", "parse error: Unexpected character 'x' at byte 4, expected nothing after the value"),
            (#"{"jsonrpc":"2.0","id":1e400,"method":"m"}"#, "parse error: Number 1e400 is not representable in Swift."),
            (
                #"{"jsonrpc":"2.0","id":1,"method":"\ud800x"}"#,
                "parse error: Unexpected end of file during string parse (expected low-surrogate code point but did not find one)."
            ),
        ]
        for (line, message) in cases {
            #expect(Self.rejection(line) == RPCRequest.Rejection(error: .parseError(message), id: .null), "\(line)")
        }
    }

    @Test func eachLimitIsRefusedWithItsNameAndWhere() {
        let depth = Self.rejection(#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[[]]]}"#) { $0.maxDepth = 3 }
        #expect(
            depth?.error
                == RPCError(
                    code: -32600,
                    message: "line refused unparsed: nesting deeper than 3 levels at byte 48 (input limit maxDepth)",
                    data: ["limit": 3, "inputLimit": "maxDepth"]
                )
        )
        #expect(
            Self.rejection(#"{"jsonrpc":"2.0","id":1,"method":"echo-all"}"#) { $0.maxStringLength = 7 }?.error.message
                == "line refused unparsed: a string longer than 7 bytes at byte 33 (input limit maxStringLength)"
        )
        #expect(
            Self.rejection(#"{"jsonrpc":"2.0","id":123}"#) { $0.maxNumberLength = 2 }?.error.message
                == "line refused unparsed: a number literal longer than 2 characters at byte 22 (input limit maxNumberLength)"
        )
        #expect(
            Self.rejection(#"{"jsonrpc":"2.0","id":1}"#) { $0.maxObjectMembers = 1 }?.error.message
                == "line refused unparsed: an object with more than 1 members at byte 17 (input limit maxObjectMembers)"
        )
        #expect(
            Self.rejection(#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}"#) { $0.maxArrayElements = 1 }?.error.message
                == "line refused unparsed: an array with more than 1 elements at byte 49 (input limit maxArrayElements)"
        )
        // At each limit the request is read.
        #expect(Self.rejection(#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[1]]}"#) { $0.maxDepth = 3 } == nil)
        #expect(Self.rejection(#"{"jsonrpc":"2.0","id":12,"method":"m"}"#) { $0.maxNumberLength = 2 } == nil)
    }
}
