import Foundation
import Testing

/// The wire between regcoded and a separately started pass-sim: every suite that talks to the backend runs its main
/// flow on each (plain HTTP, HTTPS falling back to HTTP/1.1 where the server offers no more, HTTPS with HTTP/2), with
/// regcoded's default `http_version: auto` choosing by ALPN as a box does.
enum BackendWire: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http
    case httpsHTTP1 = "https-http1.1"
    case httpsHTTP2 = "https-h2"

    var testDescription: String { rawValue }
    var usesTLS: Bool { self != .http }

    /// pass-sim's arguments: its self-signed CA and certificate in `directory`; HTTP/1.1 only for ``httpsHTTP1``.
    func simulatorArguments(certificates directory: String) -> [String] {
        switch self {
        case .http: []
        case .httpsHTTP1: ["--tls-self-signed", directory, "--no-http2"]
        case .httpsHTTP2: ["--tls-self-signed", directory]
        }
    }

    /// regcoded's arguments to trust that CA.
    func daemonArguments(certificates directory: String) -> [String] {
        usesTLS ? ["--tls-ca-file", directory + "/ca.pem"] : []
    }

    /// The protocol the simulator's connection counters must show (`/_sim/stats` `connections`).
    var expectedConnectionKey: String {
        switch self {
        case .http: "plain"
        case .httpsHTTP1: "tls_http1"
        case .httpsHTTP2: "tls_h2"
        }
    }
}

/// One HTTP request to pass-sim's admin API by curl (a client that is not ours), trusting `caFile` over HTTPS.
func simulatorRequest(_ url: String, method: String = "GET", json: String? = nil, caFile: String? = nil) async throws -> (status: Int, body: Data) {
    var arguments = ["-s", "-S", "--max-time", "20", "-X", method, "-w", "\n%{http_code}"]
    if let caFile { arguments += ["--cacert", caFile] }
    if let json { arguments += ["-H", "Content-Type: application/json", "--data-binary", json] }
    arguments.append(url)
    let process = try ChildProcess("/usr/bin/curl", arguments, absolute: true)
    guard await process.waitForExit(timeout: .seconds(30)) == 0 else {
        throw SimulatorRequestError(output: process.text)
    }
    let text = process.text
    guard let newline = text.lastIndex(of: "\n"), let status = Int(text[text.index(after: newline)...]) else {
        throw SimulatorRequestError(output: text)
    }
    return (status, Data(text[..<newline].utf8))
}

struct SimulatorRequestError: Error, CustomStringConvertible {
    var output: String
    var description: String { "curl failed: \(output)" }
}
