import ArgumentParser
import BackendHTTP
import DeviceRegistry
import Logging
import OAuthDeviceGrant
import RegcodeDaemon
import RegcodeEngine
import RegcodeSupport
import SoakReport

/// The command line: each flag declared once, as plain values, so a SIGHUP reload can apply them again from any task.
struct FlagOverrides: ParsableArguments, Sendable {
    @Option(name: .long, help: "YAML configuration file describing fleets of devices.")
    var config: String?

    @Option(name: .long, help: "SQLite database path (default ./regcoded.sqlite).")
    var database: String?

    @Option(name: .long, help: "Control socket path (default ./regcoded.sock).")
    var socket: String?

    @Option(name: .long, help: "Group whose members may use the control socket.")
    var socketGroup: String?

    @Option(name: .long, help: "Adobe Pass base URL (real or pass-sim); without it an in-process simulator runs.")
    var backend: String?

    @Option(name: .long, help: "Address of the in-process simulator (default 127.0.0.1:8080; port 0 picks one).")
    var simulatorListen: String?

    @Option(name: .long, help: "In-process simulator: approve each code after this long (e.g. 10s).")
    var simulatorAutoApproveAfter: String?

    @Flag(name: .long, help: "In-process simulator: serve HTTPS and HTTP/2 with a self-signed CA the devices trust.")
    var simulatorTls = false

    @Option(name: .long, help: "API profile of every fleet: v2 (default) or v1 (Adobe: end of support 2025-12-31, end of life end of 2026).")
    var profile: String?

    @Option(
        name: .long,
        help:
            "What kind of app every fleet's devices are: accessenabler (default; an AccessEnabler SDK app) or rest-v2 (an app calling REST API v2 itself)."
    )
    var persona: String?

    @Option(
        name: .long,
        help:
            "How every fleet's devices log in: adobe-pass (default) or oauth-device (the OAuth 2.0 device authorization grant, RFC 8628, against the backend or the fleet's oauth issuer)."
    )
    var `protocol`: String?

    @Option(name: .long, help: "Requestor id / service provider of every fleet.")
    var requestor: String?

    @Option(name: .long, help: "Preset MVPD of every fleet (skips the provider picker).")
    var mvpd: String?

    @Option(name: .long, help: "DCR software statement file of every fleet (from `pass-sim statement` for a separate pass-sim).")
    var softwareStatement: String?

    @Option(name: .long, help: "Number of devices in each fleet.")
    var devices: Int?

    @Option(name: .long, help: "Poll interval of every fleet (seconds, or 5s / 500ms).")
    var pollInterval: String?

    @Option(name: .long, help: "Serve Prometheus metrics on HOST:PORT.")
    var metrics: String?

    @Option(name: .long, help: "Serve the control API over HTTP and the web console on HOST:PORT (e.g. 127.0.0.1:8081).")
    var http: String?

    @Option(
        name: .long,
        help:
            "File with the bearer token HTTP clients must send. Without one the daemon writes a new token at start to <socket>.http-token (mode 0600) and prints the console URL with it."
    )
    var httpTokenFile: String?

    @Option(
        name: .long,
        help:
            "Most event streams (GET /events) served at once; more get 503 with Retry-After (default: seven eighths of the HTTP listener's share of the open-file limit, up to 3,584)."
    )
    var httpMaxEventStreams: Int?
    @Option(name: .long, help: "token (default): HTTP clients send the bearer token; none: no token, loopback only, on purpose.")
    var httpAuth: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    @Option(name: .long, help: "Live events buffered per subscriber before a slow one is cut off (default 4096).")
    var subscriberBuffer: Int?

    @Option(
        name: .long,
        help:
            "Close a control or HTTP connection with no call, subscription or event stream in progress after this long without traffic (default 60s; off: never)."
    )
    var idleTimeout: String?

    @Option(
        name: .long,
        help:
            "Close a connection whose control line, or HTTP request head and body, has not arrived whole this long after it began (default 10s; off: never)."
    )
    var readTimeout: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Print the activation URL and each code on standard output.")
    var printCodes: Bool?

    @Option(name: .long, help: "Run this long (30m, 2h, 1h30m), then stop gracefully and print the run's report.")
    var duration: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A threshold the run must meet, as in `regcodectl report --check` (repeatable): checked on the run's report when it stops; exit 99 when one fails.",
            valueName: "expression"
        )
    )
    var threshold: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Which address the backend sees each device's calls come from, every fleet: host (this host's own, no header), bind (each device's connections bound to its own local address) or forwarded-for (an X-Forwarded-For header per device: the server-to-server case). Default: bind when the backend is on loopback, else host.",
            valueName: "mode"
        )
    )
    var clientAddress: String?

    @Option(
        name: .long,
        help:
            "Addresses (CIDR ranges, single addresses) of bind and forwarded-for fleets without their own (default: bind 127.128.0.0/9, forwarded-for 198.18.0.0/15)."
    )
    var clientAddresses: String?

    /// The flag `--client-address` replaced; refused with a message naming it.
    @Flag(name: .long, inversion: .prefixedNo, help: .hidden)
    var forwardedFor: Bool?

    @Option(name: .long, help: "PEM bundle of certificate authorities to trust for an https:// backend, besides the system's.")
    var tlsCaFile: String?

    @Flag(name: .long, help: "Trust only --tls-ca-file, not the system's roots.")
    var tlsCaOnly = false

    @Option(name: .long, help: "Name for SNI and the certificate check (default: the backend URL's host).")
    var tlsServerName: String?

    @Option(name: .long, help: "PEM client certificate for mutual TLS (with --tls-client-key).")
    var tlsClientCertificate: String?

    @Option(name: .long, help: "PEM private key of --tls-client-certificate (or the tls-client-key credential).")
    var tlsClientKey: String?

    @Option(name: .long, help: "Lowest TLS version accepted: 1.2 (default) or 1.3.")
    var tlsMinVersion: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Check the backend's certificate (default on; --no-tls-verify is warned about).")
    var tlsVerify: Bool?

    @Option(name: .long, help: "HTTP version over TLS: auto (HTTP/2 when offered, default), 1.1 or 2.")
    var httpVersion: String?

    // Unconditional: `--shard -1/3` must reach the K/N check (exit 2), not read as another flag.
    @Option(
        name: .long,
        parsing: .unconditional,
        help: "Run shard K of N (K from 0, e.g. 1/3): a disjoint, stable slice of every fleet; N processes with 0…N-1 run each device once."
    )
    var shard: String?

    /// Defaults, then the file, then the flags: what the daemon starts with and what SIGHUP re-reads.
    func loadConfiguration(environment: [String: String]) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration.defaults(environment: environment)
        if let config {
            configuration = try ConfigurationFile.load(path: config, into: configuration)
        }
        try applyFlags(to: &configuration)
        try configuration.validate()
        return configuration
    }

    /// The command line's flags over the configuration file's values (flags win).
    func applyFlags(to configuration: inout DaemonConfiguration) throws(ConfigurationError) {
        if let database { configuration.database = database }
        if let socket { configuration.socket = socket }
        if let socketGroup { configuration.socketGroup = socketGroup }
        if let backend { configuration.backend = backend }
        if let clientAddresses { configuration.clientAddresses = clientAddresses }
        if let metrics { configuration.metrics = metrics }
        if let http { configuration.http = http }
        if let httpTokenFile { configuration.httpTokenFile = httpTokenFile }
        if let httpAuth {
            guard let auth = HTTPAuth(rawValue: httpAuth) else {
                throw ConfigurationError(file: nil, key: "--http-auth", reason: "'\(httpAuth)' is not token or none")
            }
            configuration.httpAuth = auth
        }
        if let printCodes { configuration.printCodes = printCodes }
        if let duration {
            let length = try Self.duration(duration, flag: "--duration")
            guard length > .zero else { throw ConfigurationError(file: nil, key: "--duration", reason: "must be longer than 0") }
            configuration.runLength = length
        }
        if !threshold.isEmpty {
            // The flags replace the file's list, as every flag replaces its key.
            configuration.thresholds = []
            for expression in threshold {
                do {
                    configuration.thresholds.append(try Threshold(parsing: expression))
                } catch {
                    throw ConfigurationError(file: nil, key: "--threshold", reason: error.description)
                }
            }
        }
        try applyTLSFlags(to: &configuration.tls)
        if let shard {
            switch Shard.parse(shard) {
            case .success(let value): configuration.shard = value
            case .failure(let problem): throw ConfigurationError(file: nil, key: "--shard", reason: problem.reason)
            }
        }
        if let httpMaxEventStreams {
            guard (1...1_000_000).contains(httpMaxEventStreams) else {
                throw ConfigurationError(file: nil, key: "--http-max-event-streams", reason: "\(httpMaxEventStreams) is outside 1…1000000")
            }
            configuration.httpMaxEventStreams = httpMaxEventStreams
        }
        if let subscriberBuffer {
            guard (16...1_000_000).contains(subscriberBuffer) else {
                throw ConfigurationError(file: nil, key: "--subscriber-buffer", reason: "\(subscriberBuffer) is outside 16…1000000")
            }
            configuration.subscriberBuffer = subscriberBuffer
        }
        if let idleTimeout { configuration.idleTimeout = try Self.optionalDuration(idleTimeout, flag: "--idle-timeout") }
        if let readTimeout { configuration.readTimeout = try Self.optionalDuration(readTimeout, flag: "--read-timeout") }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ConfigurationError(
                    file: nil,
                    key: "--log-level",
                    reason: "'\(logLevel)' is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            configuration.logLevel = level
        }
        try applySimulatorFlags(to: &configuration)
        try applyFleetFlags(to: &configuration)
    }

    /// `--tls-*` and `--http-version`.
    func applyTLSFlags(to tls: inout TLSClientSettings) throws(ConfigurationError) {
        if let tlsCaFile { tls.caFile = tlsCaFile }
        if tlsCaOnly { tls.caOnly = true }
        if let tlsServerName { tls.serverName = tlsServerName }
        if let tlsClientCertificate { tls.clientCertificateFile = tlsClientCertificate }
        if let tlsClientKey { tls.clientKeyFile = tlsClientKey }
        if let tlsVerify { tls.verify = tlsVerify }
        if let tlsMinVersion {
            guard let value = TLSClientSettings.MinimumVersion(rawValue: tlsMinVersion) else {
                throw ConfigurationError(file: nil, key: "--tls-min-version", reason: "'\(tlsMinVersion)' is not 1.2 or 1.3")
            }
            tls.minimumVersion = value
        }
        if let httpVersion {
            guard let value = HTTPVersionPreference(rawValue: httpVersion.lowercased()) else {
                throw ConfigurationError(file: nil, key: "--http-version", reason: "'\(httpVersion)' is not auto, 1.1 or 2")
            }
            tls.httpVersion = value
        }
    }

    /// `--simulator-*`.
    func applySimulatorFlags(to configuration: inout DaemonConfiguration) throws(ConfigurationError) {
        if let simulatorListen {
            guard let hostPort = HostPort.parse(simulatorListen) else {
                throw ConfigurationError(file: nil, key: "--simulator-listen", reason: "'\(simulatorListen)' is not HOST:PORT")
            }
            configuration.simulatorHost = hostPort.host
            configuration.simulatorPort = hostPort.port
        }
        if simulatorTls { configuration.simulatorTLS = true }
        if let simulatorAutoApproveAfter {
            configuration.simulatorAutoApproveAfter = try Self.duration(simulatorAutoApproveAfter, flag: "--simulator-auto-approve-after")
        }
    }

    /// The flags every fleet takes (`--profile`, `--requestor`, `--mvpd`, `--client-address`, `--devices`, …).
    func applyFleetFlags(to configuration: inout DaemonConfiguration) throws(ConfigurationError) {
        var profileValue: APIProfile?
        if let profile {
            guard let value = APIProfile(rawValue: profile.lowercased()) else {
                throw ConfigurationError(file: nil, key: "--profile", reason: "'\(profile)' is not v2 or v1")
            }
            profileValue = value
        }
        var personaValue: DevicePersona?
        if let persona {
            guard let value = DevicePersona(rawValue: persona.lowercased()) else {
                throw ConfigurationError(
                    file: nil,
                    key: "--persona",
                    reason: "'\(persona)' is not \(DevicePersona.allCases.map(\.rawValue).joined(separator: " or "))"
                )
            }
            personaValue = value
        }
        var protocolValue: DeviceProtocol?
        if let `protocol` {
            guard let value = DeviceProtocol(rawValue: `protocol`.lowercased()) else {
                throw ConfigurationError(
                    file: nil,
                    key: "--protocol",
                    reason: "'\(`protocol`)' is not \(DeviceProtocol.allCases.map(\.rawValue).joined(separator: " or "))"
                )
            }
            protocolValue = value
        }
        var interval: Duration?
        if let pollInterval {
            interval = try Self.duration(pollInterval, flag: "--poll-interval")
        }
        if let forwardedFor {
            throw ConfigurationError(
                file: nil,
                key: forwardedFor ? "--forwarded-for" : "--no-forwarded-for",
                reason: "replaced by --client-address \(forwardedFor ? "forwarded-for" : "host")"
            )
        }
        var clientAddressMode: ClientAddressMode?
        if let clientAddress {
            guard let mode = ClientAddressMode(rawValue: clientAddress) else {
                throw ConfigurationError(file: nil, key: "--client-address", reason: "'\(clientAddress)' is not host, bind or forwarded-for")
            }
            clientAddressMode = mode
        }
        if let devices, !(0...100_000).contains(devices) {
            throw ConfigurationError(file: nil, key: "--devices", reason: "\(devices) is outside 0…100000")
        }
        for index in configuration.fleets.indices {
            if let profileValue { configuration.fleets[index].profile = profileValue }
            if let personaValue { configuration.fleets[index].persona = personaValue }
            if let protocolValue { configuration.fleets[index].deviceProtocol = protocolValue }
            if let requestor { configuration.fleets[index].requestor = requestor }
            if let mvpd { configuration.fleets[index].mvpd = mvpd }
            if let clientAddressMode { configuration.fleets[index].clientAddress.mode = clientAddressMode }
            if let softwareStatement { configuration.fleets[index].softwareStatementFile = softwareStatement }
            if let devices { configuration.fleets[index].count = devices }
            if let interval {
                configuration.fleets[index].poll.interval = interval
                if let problem = configuration.fleets[index].poll.validationErrors().first {
                    throw ConfigurationError(file: nil, key: "--poll-interval", reason: problem)
                }
            }
        }
    }

    /// A duration flag, refused with the grammar's reason (out of range, negative, not a duration).
    static func duration(_ text: String, flag: String) throws(ConfigurationError) -> Duration {
        do {
            return try DurationParser.read(text)
        } catch {
            throw ConfigurationError(file: nil, key: flag, reason: error.description)
        }
    }

    /// A duration, or nil for `off` (also `never`, `none`).
    static func optionalDuration(_ text: String, flag: String) throws(ConfigurationError) -> Duration? {
        if ["off", "never", "none"].contains(text.lowercased()) { return nil }
        return try duration(text, flag: flag)
    }
}
