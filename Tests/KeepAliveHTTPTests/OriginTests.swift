import KeepAliveHTTP
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
