import Foundation

extension Daemon {
    /// The HTTP bearer token from `http_token_file` (or the `http-token` credential): one line, surrounding white space ignored.
    static func readHTTPToken(_ configuration: DaemonConfiguration) throws -> String? {
        guard configuration.http != nil, let path = configuration.httpTokenFile else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "http_token_file",
                reason: "cannot read \(path): \(error.localizedDescription)"
            )
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "http_token_file",
                reason: "\(path) must hold one token of at least 16 characters without spaces (e.g. from `openssl rand -hex 32`)"
            )
        }
        return token
    }
}
