import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every real-process suite runs one after another: they start daemons and simulators, and
/// running them side by side on a small machine would measure the machine, not the code.
@Suite(.serialized) enum EndToEnd {}

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL

    init() throws {
        // Short paths: Unix socket paths are limited to 108 bytes.
        url = URL(fileURLWithPath: "/tmp/rcd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A child process with captured output, killed at the end of the test if still running.
final class ChildProcess: @unchecked Sendable {
    /// The output read so far, shared with the thread that reads it.
    private final class Capture: @unchecked Sendable {
        let lock = NSLock()
        var data = Data()
    }

    let process = Process()
    private let output = Pipe()
    private let capture = Capture()

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil, absolute: Bool = false) throws {
        process.executableURL = absolute ? URL(fileURLWithPath: executable) : BuiltProducts.url(executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Blocking reads on a thread of its own until end of file, rather than a readability handler: the handler's
        // dispatch source could still be registered when the pipe's descriptor closed with this object, and
        // libdispatch then traps (`_dispatch_source_refs_finalize_unregistration`). Here the thread holds the read
        // end, so the descriptor closes only after the last read.
        let reader = output.fileHandleForReading
        let capture = self.capture
        let thread = Thread {
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                capture.lock.lock()
                capture.data.append(chunk)
                capture.lock.unlock()
            }
        }
        thread.start()
    }

    var text: String {
        capture.lock.lock()
        defer { capture.lock.unlock() }
        return String(decoding: capture.data, as: UTF8.self)
    }

    var pid: Int32 { process.processIdentifier }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for exit (polling, bounded) and returns the status, or nil on timeout.
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    /// Waits until the output contains `needle`.
    func waitForOutput(_ needle: String, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !text.contains(needle) {
            if ContinuousClock.now > deadline || !process.isRunning { return text.contains(needle) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Waits (bounded by `timeout`) until `database` holds `count` logins or `daemon` exits; returns how many it holds.
/// `counting` is the query that counts them: by default `setAuthenticationStatus` events with status 1.
func waitForLogins(
    _ count: Int,
    in database: String,
    daemon: ChildProcess,
    timeout: Duration = .seconds(60),
    counting query: String = "SELECT count(*) FROM events WHERE name = 'setAuthenticationStatus' AND json_extract(args, '$.status') = 1"
) async throws -> Int {
    var logins = 0
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, logins < count, daemon.process.isRunning {
        logins = Int((try? SQLiteShell.run(database, query)) ?? "") ?? 0
        if logins < count { try await Task.sleep(for: .milliseconds(300)) }
    }
    return logins
}

/// `pass-sim` started on an ephemeral port (`127.0.0.1:0`): the port is the one it reports as bound,
/// so concurrent runs never race for a probed port. It checks software statements with a key kept in its own
/// directory, and `pass-sim statement` issued one from that key for the daemons started against it.
struct PassSimProcess {
    let process: ChildProcess
    let url: String
    let wire: BackendWire
    /// Its CA and certificate over HTTPS (kept for the process's life).
    let certificates: TemporaryDirectory?
    /// Its statement key and the statement issued from it.
    let statements: TemporaryDirectory

    /// The CA file a client of it trusts (nil on plain HTTP).
    var caFile: String? { certificates?.path("ca.pem") }
    /// The key it checks statements with (for a restart that must accept the same statements).
    var statementKeyFile: String { statements.path("statement-key.pem") }
    /// A software statement it accepts (`software_id` regcoded-embedded, regcoded's default `redirect_uri`).
    var statementFile: String { statements.path("software-statement") }
    /// regcoded's arguments for this backend: `--backend`, its trust and its software statement.
    var daemonArguments: [String] {
        backendArguments + ["--software-statement", statementFile]
    }
    /// `--backend` and its trust only: for fleets that sign v1 calls with a key pair instead of DCR.
    var backendArguments: [String] {
        ["--backend", url] + (certificates.map { wire.daemonArguments(certificates: $0.url.path) } ?? [])
    }

    static func start(_ arguments: [String] = [], wire: BackendWire = .http) async throws -> PassSimProcess {
        let certificates = wire.usesTLS ? try TemporaryDirectory() : nil
        let tls = certificates.map { wire.simulatorArguments(certificates: $0.url.path) } ?? []
        let statements = try TemporaryDirectory()
        let key = statements.path("statement-key.pem")
        let issued = try Command.run(BuiltProducts.url("pass-sim"), ["statement", "--statement-key", key, "--software-id", "regcoded-embedded"])
        guard issued.status == 0 else { throw PassSimStartError(output: issued.stderr) }
        try issued.stdout.write(toFile: statements.path("software-statement"), atomically: true, encoding: .utf8)
        let process = try ChildProcess("pass-sim", ["--listen", "127.0.0.1:0", "--statement-key", key] + tls + arguments)
        let marker = "activation page: "
        #expect(await process.waitForOutput("/activate"), "pass-sim did not start: \(process.text)")
        guard let range = process.text.range(of: marker),
            let end = process.text[range.upperBound...].range(of: "/activate")
        else {
            throw PassSimStartError(output: process.text)
        }
        let url = String(process.text[range.upperBound..<end.lowerBound])
        return PassSimProcess(process: process, url: url, wire: wire, certificates: certificates, statements: statements)
    }

    /// One request to its admin API (`/_sim/…`), over its wire.
    func request(_ path: String, method: String = "GET", json: String? = nil) async throws -> (status: Int, body: Data) {
        try await simulatorRequest(url + path, method: method, json: json, caFile: caFile)
    }
}

struct PassSimStartError: Error, CustomStringConvertible {
    var output: String
    var description: String { "pass-sim printed no address: \(output)" }
}

/// A blocking line-oriented Unix socket client for raw protocol tests.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    private var buffer = [UInt8]()

    init(path: String) throws {
        fd = try LoopbackConnect.unix(path: path)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// The next line as JSON, or nil on timeout/close.
    func readJSON() -> JSONValue? {
        guard let line = readLine() else { return nil }
        return try? JSONValueParser.parse(line.utf8, numbers: .integralAsInt)
    }

    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads replies until the one with `id`, skipping notifications.
    func reply(id: Int) -> JSONValue? {
        while let message = readJSON() {
            if message["id"] == .int(Int64(id)) { return message }
        }
        return nil
    }

    deinit { close(fd) }
}

/// POSTs JSON to the simulator's admin API; returns the HTTP status.
func postJSON(_ url: String, _ body: String) async throws -> Int {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(body.utf8)
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as? HTTPURLResponse)?.statusCode ?? 0
}

/// A number shared between a reading thread and the test.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func set(_ value: Int) {
        lock.lock()
        current = value
        lock.unlock()
    }
}
