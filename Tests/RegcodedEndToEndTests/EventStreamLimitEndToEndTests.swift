import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// The HTTP listener's limit on event streams, against the real daemon.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct EventStreamLimitEndToEndTests {
        @Test func aStreamBeyondTheLimitGets503AndIsCountedInDaemonStatus() async throws {
            let directory = try TemporaryDirectory()
            let (daemon, url) = try await HTTPTransportTests.startDaemon(directory, extra: ["--http-max-event-streams", "2"])
            defer { daemon.signal(SIGTERM) }
            let port = try #require(URL(string: url)?.port)
            let token = try #require(HTTPTransportTests.split(url).token, "the console URL carries the generated token")
            let authorization = ["Authorization": "Bearer \(token)"]
            func status() async throws -> JSONValue? {
                try await HTTPTransportTests.post(url, #"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#).1?["result"]
            }

            let open = try (0..<2).map { _ in try EventStreamClient(port: port) }
            defer { for client in open { client.close() } }
            for client in open {
                try client.get("/events", headers: authorization)
                #expect(try await client.read { $0.text.contains("retry: 1000") }, "\(client.text)")
            }
            let refused = try EventStreamClient(port: port)
            defer { refused.close() }
            try refused.get("/events", headers: authorization)
            #expect(try await refused.read { $0.text.contains("\r\n\r\n") })
            #expect(refused.text.hasPrefix("HTTP/1.1 503"), "\(refused.text)")
            #expect(refused.text.lowercased().contains("retry-after: 5\r\n"), "\(refused.text)")
            #expect(try await status()?["eventStreams"] == ["open": 2, "limit": 2, "refused": 1])

            // A stream that ends frees its place for the next one.
            open[0].close()
            for _ in 0..<500 {
                if try await status()?["eventStreams"]?["open"] == 1 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let next = try EventStreamClient(port: port)
            defer { next.close() }
            try next.get("/events", headers: authorization)
            #expect(try await next.read { $0.text.contains("retry: 1000") }, "\(next.text)")
            #expect(next.text.hasPrefix("HTTP/1.1 200"), "\(next.text)")
            #expect(try await status()?["eventStreams"] == ["open": 2, "limit": 2, "refused": 1])
        }
    }
}
