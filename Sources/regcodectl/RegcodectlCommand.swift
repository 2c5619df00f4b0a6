import ArgumentParser
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

/// Runs `body` against the daemon, turning connection and RPC failures into a message and exit code.
func withDaemon<T: Sendable>(_ options: SocketOptions, _ body: (ControlClient) async throws -> T) async throws -> T {
    do {
        return try await ControlClient.withConnection(to: options.path, body)
    } catch let error as RPCError {
        var message = "regcodectl: error \(error.code): \(error.message)"
        if let data = error.data { message += " \(JSONText.compact(data))" }
        FileHandle.standardError.write(Data((message + "\n").utf8))
        throw ExitCode(1)
    } catch let error as ControlClientError {
        FileHandle.standardError.write(Data("regcodectl: \(error)\n".utf8))
        throw ExitCode(error.isNotRunning ? 3 : 1)
    }
}

extension ControlClientError {
    var isNotRunning: Bool {
        if case .daemonNotRunning = self { return true }
        return false
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
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(params.utf8)) else {
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
        abstract: "List devices: state, code, expiry, polls, last HTTP status.",
        discussion: "Devices are listed in natural name order (stb-2 before stb-10)."
    )

    @OptionGroup var socket: SocketOptions

    @Flag(name: .long, help: "Print the raw JSON.")
    var json = false

    func run() async throws {
        let result = try await withDaemon(socket) { client in try await client.call(method: "devices.list") }
        if json {
            print(JSONText.pretty(result))
            return
        }
        let devices = (result["devices"]?.arrayValue ?? []).sorted {
            NaturalOrder.less($0["device"]?.stringValue ?? "", $1["device"]?.stringValue ?? "")
        }
        let rows = devices.map { device -> [String] in
            [
                device["device"]?.stringValue ?? "?",
                device["state"]?.stringValue ?? "?",
                device["code"]?.stringValue ?? "-",
                device["expires"]?.intValue.map(EventLine.clock) ?? "-",
                device["polls"]?.intValue.map(String.init) ?? "0",
                device["lastHttpStatus"]?.intValue.map(String.init) ?? "-",
            ]
        }
        print(TextTable.render(header: ["DEVICE", "STATE", "CODE", "EXPIRES", "POLLS", "LAST HTTP"], rows: rows))
    }
}
