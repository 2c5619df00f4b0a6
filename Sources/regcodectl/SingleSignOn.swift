import ArgumentParser
import ControlSocket
import Foundation
import RegcodeSupport

/// `regcodectl apps DEVICE`: the table of `apps.list`.
struct Apps: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a device's apps: state, storage domain, AccessEnabler device id, login.",
        discussion: "A plain device lists its one app, main."
    )

    @OptionGroup var socket: SocketOptions

    @Argument(help: "Device name.")
    var device: String

    @Flag(name: .long, help: "Print the raw JSON.")
    var json = false

    func run() async throws {
        let device = self.device
        let result = try await withDaemon(socket) { client in
            try await client.call(method: "apps.list", params: ["device": .string(device)])
        }
        if json {
            print(JSONText.pretty(result))
            return
        }
        print(AppsTable.render(result))
    }
}

enum AppsTable {
    static func render(_ result: JSONValue) -> String {
        let rows = (result["apps"]?.arrayValue ?? []).map { app -> [String] in
            [
                app["app"]?.stringValue ?? "?",
                app["bundleId"]?.stringValue ?? "-",
                app["teamId"]?.stringValue ?? "-",
                app["accessEnabler"]?.stringValue ?? "-",
                app["state"]?.stringValue ?? "?",
                app["domain"]?.stringValue ?? "-",
                app["vendorGeneration"]?.intValue.map(String.init) ?? "-",
                app["deviceId"]?.stringValue.map(shortID) ?? "-",
                app["authenticated"]?.stringValue ?? "-",
            ]
        }
        return TextTable.render(
            header: ["APP", "BUNDLE ID", "TEAM", "AE", "STATE", "DOMAIN", "GEN", "DEVICE ID", "AUTHENTICATED"],
            rows: rows
        )
    }

    /// The first 12 characters of a long id: enough to tell apps apart, short enough for a table.
    static func shortID(_ id: String) -> String {
        id.count > 16 ? String(id.prefix(12)) + "…" : id
    }
}

/// `regcodectl explain DEVICE [--app A]`: `sso.explain`, readable.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain why an app is (not) signed in: its storage domain, device id, and the tokens it sees.",
        discussion: "Without --app, the device's first app."
    )

    @OptionGroup var socket: SocketOptions

    @Argument(help: "Device name.")
    var device: String

    @Option(name: .long, help: "App id (default: the device's first app).")
    var app: String?

    @Flag(name: .long, help: "Print the raw JSON.")
    var json = false

    func run() async throws {
        var params: [String: JSONValue] = ["device": .string(device)]
        if let app { params["app"] = .string(app) }
        let sent = JSONValue.object(params)
        let result = try await withDaemon(socket) { client in try await client.call(method: "sso.explain", params: sent) }
        if json {
            print(JSONText.pretty(result))
            return
        }
        print(Explanation.render(result))
    }
}

enum Explanation {
    static func render(_ result: JSONValue) -> String {
        let device = result["device"]?.stringValue ?? "?"
        let app = result["app"]?.stringValue ?? "?"
        guard result["sharing"]?.boolValue == true else {
            return "\(device)/\(app): \(result["reason"]?.stringValue ?? "nothing is shared")"
        }
        let faithful = result["faithful"]?.boolValue == false ? "NOT faithful (storage_scope override)" : "faithful"
        var lines = [
            "\(device)/\(app)",
            "  domain     \(result["domain"]?.stringValue ?? "?")  (rule \(result["rule"]?.stringValue ?? "?"), \(faithful))",
            "  device id  \(result["deviceId"]?.stringValue ?? "?")",
            "  IDFV       \(result["idfv"]?.stringValue ?? "?")  (vendor \(result["idfvVendorKey"]?.stringValue ?? "?"))",
        ]
        let candidates = result["candidates"]?.arrayValue ?? []
        guard !candidates.isEmpty else {
            lines.append("  no token in the domain")
            return lines.joined(separator: "\n")
        }
        let rows = candidates.map { token -> [String] in
            [
                token["owner"]?.stringValue ?? "?",
                token["mvpd"]?.stringValue ?? "?",
                token["requestor"]?.stringValue ?? "?",
                token["boundDeviceId"]?.stringValue.map(AppsTable.shortID) ?? "?",
                token["usable"]?.boolValue == true ? "yes" : "no",
                token["reason"]?.stringValue ?? "",
            ]
        }
        let table = TextTable.render(header: ["OWNER", "MVPD", "REQUESTOR", "BOUND DEVICE ID", "USABLE", "REASON"], rows: rows)
        lines.append("  tokens:")
        lines += table.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        return lines.joined(separator: "\n")
    }
}
