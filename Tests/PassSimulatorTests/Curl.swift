import Foundation
import Testing

/// `/usr/bin/curl`, a TLS and HTTP/2 client that is not ours, for checking what the simulator serves on the wire.
struct Curl {
    static let path = "/usr/bin/curl"

    /// The HTTP version curl asks for (`--http2` offers h2 and http/1.1 by ALPN, `--http1.1` only http/1.1).
    enum Version: String {
        case http2 = "--http2"
        case http1 = "--http1.1"
    }

    /// One answer: the status (0 when there was none), the HTTP version curl reports (`2`, `1.1`), the content type.
    struct Answer {
        let status: Int
        let httpVersion: String
        let contentType: String
        let body: String

        func json() throws -> [String: Any] {
            let value = try JSONSerialization.jsonObject(with: Data(self.body.utf8))
            return try #require(value as? [String: Any], "not a JSON object: \(self.body)")
        }
    }

    /// What one curl run did: its exit status, one answer per URL, and its error output.
    struct Run {
        let exitStatus: Int32
        let answers: [Answer]
        let stderr: String
    }

    /// CA file curl verifies the server with.
    let caFile: String
    /// Client certificate and key PEM files, for mutual TLS.
    var clientCertificate: (certificate: String, key: String)?

    /// Fails the test with a clear message when curl is not installed (CI installs it).
    static func requireInstalled(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.path),
            "these tests need \(Self.path) (apt-get install curl)",
            sourceLocation: sourceLocation
        )
    }

    /// Requests every URL of `urls` in order in one curl run, so over one connection when the server keeps it.
    func run(
        _ urls: [String],
        version: Version,
        method: String = "GET",
        headers: [String: String] = [:],
        body: String? = nil
    ) async throws -> Run {
        try Self.requireInstalled()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = ["--silent", "--show-error", version.rawValue, "--cacert", self.caFile, "--max-time", "20", "-X", method]
        if let clientCertificate {
            arguments += ["--cert", clientCertificate.certificate, "--key", clientCertificate.key]
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            arguments += ["-H", "\(name): \(value)"]
        }
        if let body {
            arguments += ["--data-binary", body]
        }
        arguments += ["--write-out", "%{http_code} %{http_version} %{content_type}\\n"]
        for (index, url) in urls.enumerated() {
            arguments += ["-o", directory.appendingPathComponent("body-\(index)").path, url]
        }
        let result = try await Self.execute(arguments, in: directory)
        let lines = result.stdout.split(separator: "\n")
        let answers = lines.enumerated().map { index, line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            let text = (try? String(contentsOf: directory.appendingPathComponent("body-\(index)"), encoding: .utf8)) ?? ""
            return Answer(
                status: Int(parts[0]) ?? 0,
                httpVersion: parts.count > 1 ? String(parts[1]) : "",
                contentType: parts.count > 2 ? String(parts[2]) : "",
                body: text
            )
        }
        return Run(exitStatus: result.status, answers: answers, stderr: result.stderr)
    }

    /// Runs curl and waits for it without holding a thread: the servers under test need the cooperative pool
    /// (two threads on a two-core machine) to accept connections while curl runs.
    private static func execute(_ arguments: [String], in directory: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return (
            process.terminationStatus,
            try String(contentsOf: outURL, encoding: .utf8),
            try String(contentsOf: errURL, encoding: .utf8)
        )
    }

    /// Requests one URL and returns its answer, checking curl succeeded.
    func send(
        _ url: String,
        version: Version,
        method: String = "GET",
        headers: [String: String] = [:],
        body: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Answer {
        let run = try await self.run([url], version: version, method: method, headers: headers, body: body)
        #expect(run.exitStatus == 0, "curl failed: \(run.stderr)", sourceLocation: sourceLocation)
        return try #require(run.answers.first, "no answer: \(run.stderr)", sourceLocation: sourceLocation)
    }
}
