/// Where a pool's connections go: scheme, host and port of a base URL, and the path every target is
/// appended to. Parsed once per pool, not once per request.
package struct Origin: Hashable, Sendable {
    package var usesTLS: Bool
    package var host: String
    package var port: Int
    /// The base URL's path without a trailing `/` (empty for a bare origin).
    package var pathPrefix: String
    /// The `Host` header value: the port is left out when it is the scheme's default.
    package var hostHeader: String

    /// Parses `http://host[:port][/path]` or `https://…`; nil for anything else (user info, query and
    /// fragment are refused: a base URL that carries them is a configuration mistake, not something to guess at).
    package init?(baseURL: String) {
        let scheme: Substring
        let rest: Substring
        if baseURL.hasPrefix("http://") {
            (scheme, rest) = ("http", baseURL.dropFirst(7))
        } else if baseURL.hasPrefix("https://") {
            (scheme, rest) = ("https", baseURL.dropFirst(8))
        } else {
            return nil
        }
        guard !rest.contains(where: { $0 == "?" || $0 == "#" || $0 == "@" }) else { return nil }
        let authority = rest.prefix { $0 != "/" }
        var path = rest.dropFirst(authority.count)
        while path.hasSuffix("/") { path.removeLast() }
        let defaultPort = scheme == "https" ? 443 : 80
        let host: Substring
        let port: Int
        if authority.hasPrefix("[") {
            // An IPv6 literal: `[::1]` or `[::1]:8080`.
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = defaultPort
            } else {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let value = Int(authority[authority.index(after: colon)...]) else { return nil }
            port = value
        } else {
            host = authority
            port = defaultPort
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.usesTLS = scheme == "https"
        self.host = String(host)
        self.port = port
        self.pathPrefix = String(path)
        let hostName = host.contains(":") ? "[\(host)]" : String(host)
        self.hostHeader = port == defaultPort ? hostName : "\(hostName):\(port)"
    }
}
