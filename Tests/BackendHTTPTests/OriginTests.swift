import NIOCore
import NIOPosix
import Testing

@testable import BackendHTTP

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

@Suite struct FieldValueTests {
    /// Every byte at every position of the word-at-a-time check and of its tail, against the rule byte by byte.
    @Test func everyByteAtEveryPositionIsJudgedAsByItself() {
        let fill = UInt8(ascii: "a")
        for length in [1, 7, 8, 9, 16, 23] {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: fill, count: length)
                    bytes[position] = byte
                    let expected = byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
                    let judged = bytes.withUnsafeBufferPointer { HeaderField.isFieldValue($0) }
                    if judged != expected {
                        Issue.record("byte \(byte) at \(position) of \(length): \(judged)")
                        return
                    }
                }
            }
        }
    }

    @Test func tabsSpacesAndObsTextPassTheWordCheck() {
        let value = Array("Bearer\teyJhbGciOi é \u{00A0}JIUzI1NiJ9.payload.sig".utf8)
        #expect(value.withUnsafeBufferPointer { HeaderField.isFieldValue($0) })
        #expect([UInt8]().withUnsafeBufferPointer { HeaderField.isFieldValue($0) })
    }

    @Test func longValuesAreJudgedWhole() {
        #expect(HeaderField.isValid(name: "X-A", value: String(repeating: "ab\t", count: 40)))
        #expect(!HeaderField.isValid(name: "X-A", value: String(repeating: "ab", count: 40) + "\r\n"))
    }
}
