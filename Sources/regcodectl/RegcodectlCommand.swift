import ArgumentParser
import ControlRPC
import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeSupport
import SoakReport

/// `regcodectl`: talks to a running regcoded over its control socket.
@main
struct RegcodectlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regcodectl",
        abstract: "Control a running regcoded: call AccessEnabler methods, watch events, list devices and their apps.",
        version: RegcodeVersion.current,
        subcommands: [Call.self, Watch.self, Devices.self, Apps.self, Explain.self, Report.self]
    )
}

/// Options every subcommand shares.
struct SocketOptions: ParsableArguments {
    @Option(name: .long, help: "Control socket (default: $REGCODED_SOCKET, else /run/regcoded/regcoded.sock if present, else ./regcoded.sock).")
    var socket: String?

    var path: String {
        if let socket { return socket }
        if let fromEnvironment = ProcessInfo.processInfo.environment["REGCODED_SOCKET"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        if FileManager.default.fileExists(atPath: "/run/regcoded/regcoded.sock") { return "/run/regcoded/regcoded.sock" }
        return "./regcoded.sock"
    }
}

/// Runs `body` against the daemon, turning connection and RPC failures into a message and exit code:
/// 3 when no daemon is running at the path, 1 for every other failure.
func withDaemon<T: Sendable>(_ options: SocketOptions, _ body: (ControlClient) async throws -> T) async throws -> T {
    do {
        return try await ControlClient.withConnection(to: options.path, body)
    } catch let error as RPCError {
        var message = "regcodectl: error \(error.code): \(error.message)"
        if let data = error.data { message += " \(JSONText.compact(data))" }
        // The daemon checks each peer's user; the fix is on this side, so say what it is.
        if error.code == 1005 {
            message += " (at \(options.path): run as the daemon's user or root, or as a member of its --socket-group)"
        }
        StandardError.writeLine(message)
        throw ExitCode(1)
    } catch let error as ControlClientError {
        StandardError.writeLine("regcodectl: \(error.explanation)")
        throw ExitCode(error.isNotRunning ? 3 : 1)
    }
}

extension ControlClientError {
    var isNotRunning: Bool {
        if case .daemonNotRunning = self { return true }
        return false
    }
}

enum StandardError {
    static func writeLine(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call a method and print its result as JSON.",
        discussion: "Example: regcodectl call getAuthentication '{\"device\":\"stb-1\",\"mvpd\":\"Cablevision\"}'"
    )

    @OptionGroup var socket: SocketOptions

    @Argument(help: "Method name, e.g. getAuthentication, devices.list, daemon.status.")
    var method: String

    @Argument(help: "Params as a JSON object.")
    var params: String?

    func run() async throws {
        var parsed: JSONValue?
        if let params {
            guard let value = JSONValue(parsing: params.utf8) else {
                throw ValidationError("params is not valid JSON: \(params)")
            }
            parsed = value
        }
        let result = try await withDaemon(socket) { client in try await client.call(method: method, params: parsed) }
        print(JSONText.pretty(result))
    }
}

/// Standard output for streams: a pipe or file gets each line as soon as it is written, not when
/// the C library's buffer fills or the process exits.
enum StandardOutput {
    static func writeLine(_ line: String) {
        print(line)
        // nil flushes every output stream, so this needs no reference to the global `stdout`.
        fflush(nil)
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream events: one readable line per event (or JSON lines with --json).",
        discussion: """
            With --since N the events stored after sequence N are replayed first.
            Each line is flushed as it is written, so a pipe or file sees events as they arrive.
            """
    )

    @OptionGroup var socket: SocketOptions

    @Option(name: .long, help: "Replay events after this sequence number first.")
    var since: Int64?

    @Option(name: .long, help: "Only this device (repeatable).")
    var device: [String] = []

    @Option(name: .long, help: "Only this callback name (repeatable), e.g. status.")
    var event: [String] = []

    @Flag(name: .long, help: "Print each event's params as one JSON line.")
    var json = false

    @Option(name: .long, help: "Stop after this many events.")
    var count: Int?

    func run() async throws {
        var params: [String: JSONValue] = [:]
        if let since { params["since"] = .int(since) }
        if !device.isEmpty { params["devices"] = .array(device.map { .string($0) }) }
        if !event.isEmpty { params["events"] = .array(event.map { .string($0) }) }
        let json = self.json
        let count = self.count
        try await withDaemon(socket) { client in
            _ = try await client.call(method: "subscribe", params: .object(params))
            var seen = 0
            for await notification in client.notifications {
                switch notification.method {
                case "event":
                    guard let params = notification.params else { continue }
                    StandardOutput.writeLine(json ? JSONText.compact(params) : EventLine.render(params))
                    seen += 1
                    if let count, seen >= count { return }
                case "cutoff":
                    let lastSeq = notification.params?["lastSeq"]?.intValue.map(String.init) ?? "none"
                    FileHandle.standardError.write(
                        Data(
                            "regcodectl: cut off by the daemon (\(notification.params?["reason"]?.stringValue ?? "?")); resume with --since \(lastSeq)\n"
                                .utf8
                        )
                    )
                    throw ExitCode(4)
                default:
                    continue
                }
            }
            FileHandle.standardError.write(Data("regcodectl: the daemon closed the connection\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List devices: fleet, state, code and its countdown, polls, last poll, HTTP status, last outcome.",
        discussion: """
            Devices are listed in natural name order (stb-2 before stb-10). EXPIRES counts down to the \
            code's expiry and says `expired` once it has passed; a device whose code has expired shows \
            the state `expired`, never `ready` or `polling`. LAST POLL is an age (`3s ago`). Long fields are \
            cut with … so a line fits 120 columns; fields an older daemon does not send show `-`.

            With --watch the table is redrawn every --interval until Ctrl-C (exit 0) or until the daemon \
            goes away (exit 3). On a terminal the screen is cleared and redrawn; otherwise each table is \
            written followed by a blank line (a --json result as one line), flushed.
            """
    )

    @OptionGroup var socket: SocketOptions

    @Flag(name: .long, help: "Print the raw JSON.")
    var json = false

    @Flag(name: .long, help: "Refresh the table until Ctrl-C.")
    var watch = false

    @Option(name: .long, help: "Time between refreshes with --watch (e.g. 2s, 500ms).")
    var interval = "2s"

    func validate() throws {
        do {
            guard try DurationParser.read(interval) > .zero else { throw ValidationError("--interval must be longer than 0") }
        } catch let problem as DurationParser.Problem {
            throw ValidationError("--interval: \(problem)")
        }
    }

    func run() async throws {
        guard watch else {
            let result = try await withDaemon(socket) { client in try await client.call(method: "devices.list") }
            print(json ? JSONText.pretty(result) : DevicesTable.render(result, nowMs: Self.nowMs()))
            return
        }
        let interval = try DurationParser.read(self.interval)
        let json = self.json
        let path = socket.path
        let screen = WatchScreen(
            isTerminal: isatty(STDOUT_FILENO) == 1,
            title: "every \(DurationParser.format(interval)), Ctrl-C to stop",
            blankLineAfter: !json
        )
        // Ctrl-C is the normal way to stop watching, so it ends the program successfully.
        signal(SIGINT) { _ in _exit(0) }
        try await withDaemon(socket) { client in
            while true {
                let result: JSONValue
                do {
                    result = try await client.call(method: "devices.list")
                } catch ControlClientError.connectionClosed {
                    StandardError.writeLine("regcodectl: the daemon at \(path) went away")
                    throw ExitCode(3)
                }
                let now = Self.nowMs()
                screen.show(json ? JSONText.compact(result) : DevicesTable.render(result, nowMs: now), at: now)
                try await Task.sleep(for: interval)
            }
        }
    }

    static func nowMs() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// Where `devices --watch` draws: a terminal is cleared and redrawn in place; a pipe or file gets one
/// frame after another, each followed by a blank line and flushed at once.
struct WatchScreen {
    let isTerminal: Bool
    let title: String
    /// Tables are separated by a blank line; JSON results stay one per line.
    let blankLineAfter: Bool

    func show(_ frame: String, at nowMs: Int64) {
        if isTerminal {
            // Cursor home, then clear: one write per frame, so the redraw does not flicker line by line.
            print("\u{1B}[H\u{1B}[2J\(UTCTime.clockSeconds(epochMs: nowMs))  \(title)\n\n\(frame)")
        } else {
            print(blankLineAfter ? frame + "\n" : frame)
        }
        fflush(nil)
    }
}
