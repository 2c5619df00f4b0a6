import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import ControlRPC
@testable import ControlSocket

@Suite("JSON-RPC over the socket", .timeLimit(.minutes(1)))
struct JSONRPCTests {
    @Test func callReturnsResultAndPeerCredentials() async throws {
        try await withServer { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                let echoed = try await client.call(method: "echo", params: ["device": "stb-1", "n": 3])
                #expect(echoed == ["device": "stb-1", "n": 3])
                #expect(try await client.call(method: "add", params: ["a": 2, "b": 40]) == 42)

                let me = try await client.call(method: "whoami")
                #expect(me["pid"]?.intValue == Int64(getpid()))
                #expect(me["uid"]?.intValue == Int64(geteuid()))
                #expect(me["gid"]?.intValue == Int64(getegid()))
            }
        }
    }

    @Test func repliesAreOneLineWithSortedKeys() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(#"{"params":{"b":1,"a":"x\ny\"z/é"},"method":"echo","id":1,"jsonrpc":"2.0"}"# + "\n")
                let line = try await connection.readLine()
                #expect(line == #"{"id":1,"jsonrpc":"2.0","result":{"a":"x\ny\"z/é","b":1}}"#)
            }
        }
    }

    @Test func malformedLineGetsParseErrorAndTheConnectionSurvives() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n")
                let error = try #require(try await connection.readJSON())
                #expect(error["id"] == .null)
                #expect(error["error"]?["code"] == -32700)
                // A specific reason, not just "invalid JSON".
                #expect(error["error"]?["message"]?.stringValue?.hasPrefix("parse error: Unexpected end of file") == true)

                try await connection.send(#"{"jsonrpc":"2.0","id":2,"method":"echo","params":["still here"]}"# + "\n")
                let reply = try #require(try await connection.readJSON())
                #expect(reply["id"] == 2)
                #expect(reply["result"] == ["still here"])
            }
        }
    }

    @Test func unknownMethodAndInvalidParams() async throws {
        try await withServer { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                let unknown = await #expect(throws: RPCError.self) { try await client.call(method: "noSuchMethod") }
                #expect(unknown?.code == -32601)
                #expect(unknown?.message == "unknown method 'noSuchMethod'")

                let invalid = await #expect(throws: RPCError.self) { try await client.call(method: "add", params: ["a": "two"]) }
                #expect(invalid?.code == -32602)
                #expect(invalid?.data == ["params": ["a": "two"]])

                // Errors do not end the session.
                #expect(try await client.call(method: "echo", params: [1]) == [1])
            }
        }
    }

    @Test func invalidRequestsGetMinus32600WithTheBestIDAvailable() async throws {
        let cases: [(line: String, id: JSONValue)] = [
            ("[1,2]", .null),  // batches are refused
            ("42", .null),
            (#""just a string""#, .null),
            (#"{"id":3,"method":"echo"}"#, 3),  // no jsonrpc member
            (#"{"jsonrpc":"1.0","id":"four","method":"echo"}"#, "four"),
            (#"{"jsonrpc":"2.0","id":5,"method":7}"#, 5),
            (#"{"jsonrpc":"2.0","id":6}"#, 6),
            (#"{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}"#, .null),
            (#"{"jsonrpc":"2.0","id":8,"method":"echo","params":"scalar"}"#, 8),
        ]
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                for (line, id) in cases {
                    try await connection.send(line + "\n")
                    let reply = try #require(try await connection.readJSON(), "no reply to \(line)")
                    #expect(reply["error"]?["code"] == -32600, "for \(line)")
                    #expect(reply["id"] == id, "for \(line)")
                    #expect(reply["jsonrpc"] == "2.0")
                }
                let batch = "[1,2]\n"
                try await connection.send(batch)
                let refusal = try #require(try await connection.readJSON())
                #expect(refusal["error"]?["message"]?.stringValue?.contains("batch") == true)

                try await connection.send(#"{"jsonrpc":"2.0","id":9,"method":"echo","params":{"ok":true}}"# + "\n")
                #expect(try await connection.readJSON()?["result"] == ["ok": true])
            }
        }
    }

    @Test func notificationsGetNoReply() async throws {
        let handler = TestHandler()
        try await withServer(handler: handler) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(#"{"jsonrpc":"2.0","method":"echo","params":["note"]}"# + "\n")
                // Failing notifications stay silent too.
                try await connection.send(#"{"jsonrpc":"2.0","method":"noSuchMethod"}"# + "\n")
                try await connection.send(#"{"jsonrpc":"2.0","id":7,"method":"echo","params":["call"]}"# + "\n")
                let first = try #require(try await connection.readJSON())
                #expect(first["id"] == 7)
                #expect(first["result"] == ["call"])
            }
        }
        #expect(handler.receivedMethods == ["echo", "noSuchMethod", "echo"])
    }

    @Test func nullIDIsARequestNotANotification() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(#"{"jsonrpc":"2.0","id":null,"method":"echo","params":[1]}"# + "\n")
                let reply = try #require(try await connection.readJSON())
                #expect(reply == ["jsonrpc": "2.0", "id": .null, "result": [1]])
            }
        }
    }

    @Test func crlfBlankLinesAndSplitWritesAreTolerated() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send("\r\n\n   \n")
                try await connection.send(#"{"jsonrpc":"2.0","id":1,"meth"#)
                try await Task.sleep(for: .milliseconds(20))
                try await connection.send(#"od":"echo","params":["crlf"]}"# + "\r\n")
                let reply = try #require(try await connection.readJSON())
                #expect(reply["id"] == 1)
                #expect(reply["result"] == ["crlf"])
            }
        }
    }

    @Test func repliesComeBackInCallOrder() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                try await connection.send(
                    #"{"jsonrpc":"2.0","id":1,"method":"slow","params":{"ms":150,"tag":"first"}}"# + "\n"
                        + #"{"jsonrpc":"2.0","id":2,"method":"echo","params":["second"]}"# + "\n"
                )
                #expect(try await connection.readJSON()?["id"] == 1)
                #expect(try await connection.readJSON()?["id"] == 2)
            }
        }
    }

    @Test func twoMiBLineIsRefusedWhileOthersKeepWorking() async throws {
        try await withServer { _, path in
            try await withRawConnection(to: path) { (flooder: inout RawConnection) async throws in
                try await flooder.send(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[""#)
                try await flooder.send(bytes: 3 << 19, of: UInt8(ascii: "a"))  // 1.5 MiB so far

                // Meanwhile another client is served normally.
                try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                    #expect(try await client.call(method: "echo", params: ["other"]) == ["other"])
                }

                try await flooder.send(bytes: 1 << 19, of: UInt8(ascii: "a"))  // past 2 MiB
                try await flooder.send("\"]}\n")
                let refusal = try #require(try await flooder.readJSON())
                #expect(refusal["id"] == .null)
                #expect(refusal["error"]?["code"] == -32600)
                #expect(refusal["error"]?["message"]?.stringValue?.contains("1 MiB") == true)

                // The same connection answers the next call.
                try await flooder.send(#"{"jsonrpc":"2.0","id":2,"method":"echo","params":["after"]}"# + "\n")
                let reply = try #require(try await flooder.readJSON())
                #expect(reply["id"] == 2)
                #expect(reply["result"] == ["after"])
            }
        }
    }

    @Test func lineLimitIsExact() async throws {
        let limit = 200
        let configure: (inout ControlServer.Configuration) -> Void = { $0.maxLineLength = limit }
        try await withServer(configure: configure) { _, path in
            try await withRawConnection(to: path) { (connection: inout RawConnection) async throws in
                func request(id: Int, length: Int) -> String {
                    let prefix = #"{"jsonrpc":"2.0","id":\#(id),"method":"echo","params":[""#
                    let suffix = #""]}"#
                    return prefix + String(repeating: "p", count: length - prefix.utf8.count - suffix.utf8.count) + suffix
                }
                try await connection.send(request(id: 1, length: limit) + "\r\n")
                #expect(try await connection.readJSON()?["id"] == 1)
                try await connection.send(request(id: 2, length: limit + 1) + "\n")
                let refusal = try #require(try await connection.readJSON())
                #expect(refusal["error"]?["code"] == -32600)
                #expect(refusal["error"]?["data"]?["limit"] == .int(Int64(limit)))
                try await connection.send(request(id: 3, length: limit) + "\n")
                #expect(try await connection.readJSON()?["id"] == 3)
            }
        }
    }

    @Test func concurrentCallsOnOneClientAreMatchedByID() async throws {
        try await withServer { _, path in
            try await ControlClient.withConnection(to: path) { (client: ControlClient) async throws in
                try await withThrowingTaskGroup(of: (Int64, JSONValue).self) { group in
                    for index in Int64(0)..<20 {
                        group.addTask { (index, try await client.call(method: "echo", params: [.int(index)])) }
                    }
                    for try await (index, result) in group {
                        #expect(result == [.int(index)])
                    }
                }
            }
        }
    }
}
