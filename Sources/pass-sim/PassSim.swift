import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Hummingbird
import Logging
import PassSimulator

@main
struct PassSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pass-sim",
        abstract: "A simulated Adobe Pass backend (DCR + REST API v2) with a second-screen activation page and an admin API."
    )

    @Option(name: .long, help: ArgumentHelp("Address to listen on.", valueName: "host:port"))
    var listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080)

    @Option(name: .long, help: ArgumentHelp("Complete every code automatically this many seconds after it was issued.", valueName: "seconds"))
    var autoApproveAfter: Seconds?

    @Option(name: .long, help: ArgumentHelp("Lifetime of authentication codes.", valueName: "seconds"))
    var codeTtl: Seconds = Seconds(1800)

    @Flag(name: .long, help: "Disable the per-device rate limit (10 requests burst, 1 per second).")
    var noThrottle = false

    @Option(name: .long, help: ArgumentHelp("Log level.", valueName: "level"))
    var logLevel: LogLevel = LogLevel(.info)

    func validate() throws {
        if self.codeTtl.value <= 0 {
            throw ValidationError("--code-ttl must be greater than 0 seconds.")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "pass-sim")
        logger.logLevel = self.logLevel.level

        var configuration = SimulatorConfiguration()
        configuration.codeTTL = self.codeTtl.duration
        configuration.autoApproveAfter = self.autoApproveAfter?.duration
        configuration.throttleEnabled = !self.noThrottle

        let simulator = PassSimulator(configuration: configuration, logger: logger)
        let host = self.listen.host
        let application = simulator.makeApplication(host: host, port: self.listen.port) { port in
            let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            let authority = shownHost.contains(":") ? "[\(shownHost)]:\(port)" : "\(shownHost):\(port)"
            writeLine("pass-sim listening; activation page: http://\(authority)/activate")
        }
        try await application.runService()
    }
}

/// `HOST:PORT`, with `[v6]:PORT` for IPv6 literals.
struct ListenAddress: ExpressibleByArgument {
    let host: String
    let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(argument: String) {
        let host: Substring
        let portText: Substring
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { return nil }
            host = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = argument.lastIndex(of: ":") else { return nil }
            host = argument[..<colon]
            portText = argument[argument.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    var defaultValueDescription: String { "\(self.host):\(self.port)" }
}

/// A non-negative number of seconds, fractions allowed.
struct Seconds: ExpressibleByArgument {
    let value: Double

    init(_ value: Double) {
        self.value = value
    }

    init?(argument: String) {
        guard let value = Double(argument), value.isFinite, value >= 0 else { return nil }
        self.value = value
    }

    var duration: Duration { .milliseconds(Int64((self.value * 1000).rounded())) }

    var defaultValueDescription: String {
        self.value == self.value.rounded() ? String(Int64(self.value)) : String(self.value)
    }
}

struct LogLevel: ExpressibleByArgument {
    let level: Logger.Level

    init(_ level: Logger.Level) {
        self.level = level
    }

    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }

    var defaultValueDescription: String { self.level.rawValue }

    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}

/// Writes straight to stdout so the line is visible at once even when stdout is a pipe.
func writeLine(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
