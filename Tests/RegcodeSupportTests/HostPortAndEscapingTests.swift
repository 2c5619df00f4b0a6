import RegcodeSupport
import Testing

@Suite struct HostPortAndEscapingTests {
    @Test func hostPortReadsNamesAddressesAndBracketedIPv6() {
        #expect(HostPort.parse("127.0.0.1:8080") == HostPort(host: "127.0.0.1", port: 8080))
        #expect(HostPort.parse("[::1]:0") == HostPort(host: "::1", port: 0))
        #expect(HostPort.parse("localhost") == nil)
        #expect(HostPort.parse(":80") == nil)
        #expect(HostPort.parse("h:65536") == nil)
    }

    @Test func htmlEscapingIsSafeInTextAndQuotedAttributes() {
        #expect(HTML.escape(#"<a href="x">Tom & 'Jerry'</a>"#) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;")
        #expect(HTML.escape("a\u{1}b\nc") == "a\u{FFFD}b\nc")
    }

    @Test func splitMix64IsReproduciblePerSeed() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        var other = SplitMix64(seed: 43)
        let a = (0..<4).map { _ in first.next() }
        #expect(a == (0..<4).map { _ in second.next() })
        #expect(a != (0..<4).map { _ in other.next() })
    }
}
