import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends `request` to 127.0.0.1:`port` over a plain TCP connection and returns what arrived until `needle` was read
/// (or the connection closed, or 10 s of silence); then closes.
func tcpExchange(port: Int, request: String, until needle: String) throws -> String {
    let fd = try LoopbackConnect.tcp(port: port)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var received = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<64 {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        received += chunk[..<count]
        if String(decoding: received, as: UTF8.self).contains(needle) { break }
    }
    return String(decoding: received, as: UTF8.self)
}

extension EndToEnd {
    /// The HTTP listener is as strict as the control socket: on loopback too it needs a token, which the daemon
    /// generates into a 0600 file beside its socket and prints in the console URL; no log line carries it.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct HTTPAccessTests {
        static let call = #"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#

        static func port(of url: String) throws -> Int {
            let address = try #require(URL(string: HTTPTransportTests.split(url).base))
            return try #require(address.port)
        }

        @Test func loopbackWithoutTheTokenIsRefusedAndTheTokenFileIsTheOwnersOnly() async throws {
            let directory = try TemporaryDirectory()
            let (daemon, url) = try await HTTPTransportTests.startDaemon(directory)
            let tokenFile = directory.path("s.http-token")
            // What a local user who cannot open the socket can do: call /rpc on loopback without the token.
            let (refused, body) = try await HTTPTransportTests.post(HTTPTransportTests.split(url).base, Self.call)
            #expect(refused == 401, "\(daemon.text)")
            #expect(body == nil)
            let events = try tcpExchange(
                port: try Self.port(of: url),
                request: "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                until: "\r\n\r\n"
            )
            #expect(events.hasPrefix("HTTP/1.1 401"), "\(events)")

            let attributes = try FileManager.default.attributesOfItem(atPath: tokenFile)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.count == 64)
            #expect(HTTPTransportTests.split(url).token == token, "the console URL carries the token of the file")
            let (status, answer) = try await HTTPTransportTests.post(HTTPTransportTests.split(url).base, Self.call, token: token)
            #expect(status == 200)
            #expect(answer?["result"]?["version"] != nil)

            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            #expect(!FileManager.default.fileExists(atPath: tokenFile), "the token outlived the daemon")
        }

        /// `localhost` resolves to loopback: the same token rule applies there.
        @Test func localhostNeedsTheTokenToo() async throws {
            let directory = try TemporaryDirectory()
            let (daemon, url) = try await HTTPTransportTests.startDaemon(directory, http: "localhost:0")
            let local = "http://127.0.0.1:\(try Self.port(of: url))/"
            #expect(try await HTTPTransportTests.post(local, Self.call).0 == 401, "\(daemon.text)")
            let token = try #require(HTTPTransportTests.split(url).token)
            #expect(try await HTTPTransportTests.post(local, Self.call, token: token).0 == 200)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }

        /// `--http-auth none` turns the token off on purpose, and the daemon says so at start.
        @Test func httpAuthNoneIsLoopbackOnlyAndWarned() async throws {
            let directory = try TemporaryDirectory()
            let (daemon, url) = try await HTTPTransportTests.startDaemon(directory, extra: ["--http-auth", "none"])
            #expect(HTTPTransportTests.split(url).token == nil)
            #expect(daemon.text.contains("http_auth: none"), "\(daemon.text)")
            #expect(try await HTTPTransportTests.post(url, Self.call).0 == 200)
            #expect(!FileManager.default.fileExists(atPath: directory.path("s.http-token")))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)

            let refused = try Command.run(
                BuiltProducts.url("regcoded"),
                ["--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"), "--http", "0.0.0.0:0", "--http-auth", "none"]
            )
            #expect(refused.status == 2, "\(refused.stderr)")
        }

        /// A host that only looks like loopback (`127.…` as a name that resolves elsewhere, or nowhere) is not
        /// loopback: without a token file it is refused before anything is created.
        @Test func aNameStartingWith127IsNotLoopback() throws {
            let directory = try TemporaryDirectory()
            let result = try Command.run(
                BuiltProducts.url("regcoded"),
                [
                    "--database", directory.path("db.sqlite"), "--socket", directory.path("s.sock"), "--devices", "0",
                    "--simulator-listen", "127.0.0.1:0", "--http", "127.0.0.1.invalid:0",
                ]
            )
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("reachable from other hosts"), "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        }

        /// Every log level, trace included, with calls that carry the token as a header and as `access_token`, a
        /// wrong token, and an event stream: the token appears in no line of the daemon's output.
        @Test func theTokenIsInNoLogLineAtTrace() async throws {
            let directory = try TemporaryDirectory()
            let token = "tr4ce-0123456789abcdef-\(UUID().uuidString.prefix(8))"
            try (token + "\n").write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
            let (daemon, url) = try await HTTPTransportTests.startDaemon(
                directory,
                extra: ["--http-token-file", directory.path("token"), "--log-level", "trace"]
            )
            #expect(try await HTTPTransportTests.post(url, Self.call, token: token).0 == 200)
            #expect(try await HTTPTransportTests.post(url, Self.call, token: token + "x").0 == 401)
            let port = try Self.port(of: url)
            let stream = try tcpExchange(
                port: port,
                request: "GET /events?since=0&access_token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                until: "retry:"
            )
            #expect(stream.hasPrefix("HTTP/1.1 200"), "\(stream)")
            let page = try tcpExchange(
                port: port,
                request: "GET /?access_token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n",
                until: "</html>"
            )
            #expect(page.hasPrefix("HTTP/1.1 200"))
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
            #expect(daemon.text.contains("trace"), "not a trace log")
            let lines = daemon.text.split(separator: "\n").filter { $0.contains(token) }
            #expect(lines.isEmpty, "\(lines.count) lines carry the token: \(lines.prefix(4))")
        }
    }
}
