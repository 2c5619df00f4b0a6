import ControlRPC
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RegcodeSupport
import Testing

@testable import ControlHTTP

@Suite struct HTTPControlServerTests {
    static let json: HTTPFields = [.contentType: "application/json"]

    func application(_ handler: FakeControlHandler, token: String? = nil) -> some ApplicationProtocol {
        var configuration = HTTPControlServer.Configuration(host: "127.0.0.1", port: 0, token: token)
        configuration.maxBodySize = 4096
        let server = HTTPControlServer(configuration: configuration, handler: handler, logger: Logger(label: "test"))
        return server.makeApplication()
    }

    @Test func rpcAnswersAsTheSocketDoes() async throws {
        let handler = FakeControlHandler()
        try await application(handler).test(.live) { client in
            try await client.execute(
                uri: "/rpc",
                method: .post,
                headers: Self.json,
                body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"b":1,"a":"x"}}"#)
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(String(buffer: response.body) == #"{"id":1,"jsonrpc":"2.0","result":{"a":"x","b":1}}"# + "\n")
            }
            try await client.execute(
                uri: "/rpc",
                method: .post,
                headers: Self.json,
                body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":"f","method":"fail"}"#)
            ) { response in
                // A JSON-RPC error is a successful HTTP exchange.
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""code":1001"#))
            }
            try await client.execute(uri: "/rpc", method: .post, headers: Self.json, body: ByteBuffer(string: #"{"jsonrpc":"2.0","method":"echo"}"#))
            {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/rpc", method: .post, headers: Self.json, body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"#)) {
                #expect(String(buffer: $0.body).contains(#""code":-32700"#))
            }
            try await client.execute(
                uri: "/rpc",
                method: .post,
                headers: Self.json,
                body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":2,"method":"subscribe"}"#)
            ) { response in
                let body = String(buffer: response.body)
                #expect(body.contains(#""code":-32601"#) && body.contains("GET /events"))
            }
            try await client.execute(uri: "/rpc", method: .post, headers: Self.json, body: ByteBuffer(string: String(repeating: " ", count: 5000))) {
                #expect($0.status == .contentTooLarge)
            }
        }
        #expect(handler.calls == ["echo", "fail", "echo"])
        #expect(handler.peers.allSatisfy { if case .http = $0 { true } else { false } })
    }

    @Test func aBodyThatIsNotDeclaredJSONIsNotRead() async throws {
        let handler = FakeControlHandler()
        try await application(handler).test(.live) { client in
            // A cross-site form can post text/plain without a preflight; it must not reach a method.
            try await client.execute(
                uri: "/rpc",
                method: .post,
                headers: [.contentType: "text/plain"],
                body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"echo"}"#)
            ) { #expect($0.status == .unsupportedMediaType) }
        }
        #expect(handler.calls.isEmpty)
    }

    @Test func aWrongTokenGets401AndNothingElse() async throws {
        let handler = FakeControlHandler()
        let token = "s3cr3t-token-0123456789"
        try await application(handler, token: token).test(.live) { client in
            let port = try #require(client.port)
            let call = #"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}"#
            for authorization in ["Bearer wrong-token-0123456789", "Bearer ", "Basic \(token)", nil] {
                let header = authorization.map { "Authorization: \($0)\r\n" } ?? ""
                let rpc = try await RawHTTP.exchange(
                    "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(header)Content-Length: \(call.utf8.count)\r\n\r\n\(call)",
                    port: port
                )
                #expect(rpc.hasPrefix("HTTP/1.1 401"), "\(authorization ?? "none")")
                #expect(rpc.hasSuffix("\r\n\r\n"), "an empty body")
                #expect(rpc.lowercased().contains("www-authenticate: bearer"))
                let events = try await RawHTTP.exchange("GET /events?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)\r\n", port: port)
                #expect(events.hasPrefix("HTTP/1.1 401"))
            }
            let query = try await RawHTTP.exchange("GET /events?since=0&access_token=wrong HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
            #expect(query.hasPrefix("HTTP/1.1 401"))
            var headers = Self.json
            headers[.authorization] = "Bearer \(token)"
            try await client.execute(uri: "/rpc", method: .post, headers: headers, body: ByteBuffer(string: call)) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""result":[1]"#))
            }
            // The page is static and holds no data: it loads and then asks for the token.
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
            }
        }
        #expect(handler.calls == ["echo"])
    }

    @Test func eventsReplayStoredOnesThenStreamLiveOnesWithTheirSequenceAsID() async throws {
        let handler = FakeControlHandler()
        handler.emit(device: "stb-1", name: "status")
        handler.emit(device: "stb-2", name: "status")
        handler.emit(device: "stb-1", name: "setAuthenticationStatus")
        try await application(handler).test(.live) { client in
            async let body = client.execute(uri: "/events?device=stb-1", method: .get, headers: [HTTPField.Name("Last-Event-ID")!: "1"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/event-stream")
                return String(buffer: response.body)
            }
            // Live events once the replay has been sent (a shutdown during the replay ends it there, by design).
            await handler.waitForCall("replayed")
            handler.emit(device: "stb-2", name: "status")
            handler.emit(device: "stb-1", name: "logout")
            // Ends every stream: the client then gets a cutoff event naming the last sequence it received.
            handler.broadcaster.finish()
            let text = try await body
            let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
            #expect(ids == ["3", "5"], "\(text)")
            #expect(text.contains("event: cutoff\ndata: {\"lastSeq\":5,"), "\(text)")
            #expect(text.hasPrefix("retry: 1000\n\n"))
        }
    }

    @Test func aBadSinceIsRefusedBeforeStreaming() async throws {
        let handler = FakeControlHandler()
        try await application(handler).test(.live) { client in
            try await client.execute(uri: "/events?since=yesterday", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains(#""code":-32602"#))
            }
        }
    }
}
