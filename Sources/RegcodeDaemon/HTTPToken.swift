import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the HTTP listener asks its clients for the bearer token (`http_auth`, `--http-auth`).
package enum HTTPAuth: String, Sendable {
    /// Every client sends the token, on loopback too: a local user who cannot open the control socket cannot use
    /// the API either.
    case token
    /// No token, on purpose: loopback only, and the daemon warns about it at start.
    case none
}

/// The HTTP listener's bearer token and where it came from.
struct HTTPToken: Sendable {
    let value: String
    /// The file the daemon writes it to at start (a token it generated), nil for the operator's own file.
    let generatedFile: String?

    /// A new token: 32 random bytes (the system's cryptographic generator) as 64 hexadecimal digits.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }
        .joined()
    }

    /// Writes `value` to `path` with mode 0600: a new file renamed into place, so a reader sees the old token or the
    /// new one whole, and a symlink planted at `path` is replaced rather than followed.
    func write(to path: String) throws(ConfigurationError) {
        let temporary = "\(path).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure(path, errno) }
        let bytes = Array((value + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let code = errno
        _ = fchmod(fd, 0o600)
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            throw Self.failure(path, code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Self.failure(path, code)
        }
    }

    private static func failure(_ path: String, _ code: Int32) -> ConfigurationError {
        ConfigurationError(file: nil, key: "http", reason: "cannot write the HTTP token file \(path): \(String(cString: strerror(code)))")
    }
}

extension DaemonConfiguration {
    /// Where a generated HTTP token is written: beside the control socket, named after it (`regcoded.sock` →
    /// `regcoded.http-token`), readable by the daemon's user only, like the socket's own mode.
    package var generatedHTTPTokenPath: String {
        let stem = socket.hasSuffix(".sock") ? String(socket.dropLast(".sock".count)) : socket
        return stem + ".http-token"
    }
}

extension Daemon {
    /// Says at start that the HTTP listener takes no token, when `http_auth: none` asks for that.
    static func warnAboutHTTPAuth(_ configuration: DaemonConfiguration, logger: Logger) {
        guard let http = configuration.http, configuration.httpAuth == .none else { return }
        logger.warning(
            "the HTTP listener takes no token (http_auth: none): every local user can call the control API through it",
            metadata: ["http": "\(http)"]
        )
    }

    /// Removes the token file this daemon wrote at start: the token dies with the daemon.
    func removeGeneratedHTTPToken() {
        if let path = httpToken?.generatedFile { unlink(path) }
    }

    /// The HTTP bearer token: read from `http_token_file` (or the `http-token` credential), else generated (written to
    /// ``DaemonConfiguration/generatedHTTPTokenPath`` once the listener starts); nil without `http` or with
    /// `http_auth: none`.
    static func httpToken(_ configuration: DaemonConfiguration) throws -> HTTPToken? {
        guard configuration.http != nil, configuration.httpAuth == .token else { return nil }
        guard let path = configuration.httpTokenFile else {
            return HTTPToken(value: HTTPToken.generate(), generatedFile: configuration.generatedHTTPTokenPath)
        }
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
        return HTTPToken(value: token, generatedFile: nil)
    }
}
