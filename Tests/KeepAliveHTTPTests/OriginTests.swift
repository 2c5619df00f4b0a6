import KeepAliveHTTP
import NIOCore
import NIOPosix
import Testing

@Suite struct OriginTests {
    @Test func parsesHostPortAndPathOnce() throws {
        let origin = try #require(Origin(baseURL: "http://127.0.0.1:8080/prefix/"))
        #expect(origin.host == "127.0.0.1")
        #expect(origin.port == 8080)
        #expect(origin.pathPrefix == "/prefix")
        #expect(origin.hostHeader == "127.0.0.1:8080")
        #expect(!origin.usesTLS)
    }

    @Test func defaultPortsAndIPv6Literals() throws {
        let plain = try #require(Origin(baseURL: "http://sim.lab"))
        #expect(plain.port == 80)
        #expect(plain.hostHeader == "sim.lab")
        #expect(plain.pathPrefix == "")
        let tls = try #require(Origin(baseURL: "https://sp.auth.adobe.com"))
        #expect(tls.usesTLS && tls.port == 443)
        let v6 = try #require(Origin(baseURL: "http://[::1]:9000"))
        #expect(v6.host == "::1")
        #expect(v6.hostHeader == "[::1]:9000")
    }

    @Test(arguments: [
        "ftp://host", "http://", "http://host:0", "http://host:99999", "http://host:port", "http://user@host", "http://host/?q=1", "host:80",
    ])
    func refusesWhatIsNotABaseURL(_ text: String) {
        #expect(Origin(baseURL: text) == nil)
    }
}

@Suite struct HeaderFieldTests {
    @Test(arguments: [
        ("Authorization", "Bearer x\r\nX-Injected: 1"),
        ("Authorization", "Bearer x\n"),
        ("Authorization", "a\u{0}b"),
        ("X-Bad Name", "v"),
        ("X-Bad:Name", "v"),
        ("", "v"),
    ])
    func aFieldThatCouldSplitTheRequestIsRefusedBeforeAnythingIsSent(name: String, value: String) async throws {
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "http://127.0.0.1:9")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 1
        )
        do {
            _ = try await pool.execute(
                KeepAliveRequest(method: .GET, target: "/", headers: [(name, value)]),
                deadline: .now() + .seconds(5),
                maxBodyBytes: 16
            )
            Issue.record("sent")
        } catch let error as KeepAliveHTTPError {
            // Refused before any connection was asked for (a connection to port 9 would fail differently).
            guard case .protocolError = error else {
                Issue.record("\(error)")
                return
            }
        }
        pool.shutdown()
    }
}
