import Testing

@testable import ControlHTTP

@Suite struct AccessRuleTests {
    let withToken = AccessRule(token: "0123456789abcdef0123")
    let loopbackOnly = AccessRule(token: nil)

    @Test func theRightBearerTokenIsLetIn() {
        #expect(withToken.verdict(path: "/rpc", authorization: "Bearer 0123456789abcdef0123", queryToken: nil, host: "lab:8081") == .allowed)
        #expect(withToken.verdict(path: "/events", authorization: nil, queryToken: "0123456789abcdef0123", host: "lab:8081") == .allowed)
    }

    @Test func aWrongMissingOrMisspelledTokenIsRefused() {
        #expect(withToken.verdict(path: "/rpc", authorization: "Bearer 0123456789abcdef0124", queryToken: nil, host: nil) == .unauthorized)
        #expect(withToken.verdict(path: "/rpc", authorization: "Bearer 0123456789abcdef012", queryToken: nil, host: nil) == .unauthorized)
        #expect(withToken.verdict(path: "/rpc", authorization: "Basic 0123456789abcdef0123", queryToken: nil, host: nil) == .unauthorized)
        #expect(withToken.verdict(path: "/rpc", authorization: nil, queryToken: nil, host: nil) == .unauthorized)
        #expect(withToken.verdict(path: "/events", authorization: nil, queryToken: "x", host: nil) == .unauthorized)
        // A presented wrong token is refused even for the static page.
        #expect(withToken.verdict(path: "/", authorization: "Bearer wrong", queryToken: nil, host: nil) == .unauthorized)
    }

    @Test func theStaticConsolePageLoadsWithoutAToken() {
        #expect(withToken.verdict(path: "/", authorization: nil, queryToken: nil, host: "lab:8081") == .allowed)
    }

    @Test func withoutATokenOnlyLoopbackHostNamesAreServed() {
        for host in ["127.0.0.1:8081", "localhost:8081", "LOCALHOST", "[::1]:8081", "console.localhost:80", "127.1.2.3"] {
            #expect(loopbackOnly.verdict(path: "/rpc", authorization: nil, queryToken: nil, host: host) == .allowed, "\(host)")
        }
        for host in ["evil.example:8081", "127.0.0.1.evil.example", "", "[fe80::1]:8081"] {
            #expect(loopbackOnly.verdict(path: "/rpc", authorization: nil, queryToken: nil, host: host) == .forbiddenHost, "\(host)")
        }
        #expect(loopbackOnly.verdict(path: "/rpc", authorization: nil, queryToken: nil, host: nil) == .forbiddenHost)
    }
}
