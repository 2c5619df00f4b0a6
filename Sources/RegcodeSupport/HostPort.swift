/// `HOST:PORT` as flags write it.
package struct HostPort: Sendable, Equatable {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    package static func parse(_ text: String) -> HostPort? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        return HostPort(host: host, port: port)
    }
}
