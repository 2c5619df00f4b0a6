import BackendHTTP
import DeviceRegistry
import Logging
import RegcodeSupport
import SoakReport
import Yams

/// What the top level of the file fills: the configuration, and `defaults` and `fleets`, which are applied together
/// once the whole level is read, so `defaults` applies to every fleet whatever order the keys come in.
struct ConfigurationFileState {
    var configuration: DaemonConfiguration
    var defaults = FleetConfiguration()
    var fleets: Node?
}

/// The configuration file's keys, section by section: the rows the reader walks and the reference lists.
enum ConfigurationKeys {
    typealias Key = ConfigurationKey<ConfigurationFileState>

    /// The top level.
    static let daemon: [Key] = [
        .string("database", \.configuration.database, "SQLite database path (under systemd: `$STATE_DIRECTORY/regcoded.sqlite`)."),
        .string("socket", \.configuration.socket, "Control socket path (under systemd: `$RUNTIME_DIRECTORY/regcoded.sock`)."),
        .optionalString("socket_group", \.configuration.socketGroup, "Group whose members may use the control socket."),
        .optionalString(
            "backend",
            \.configuration.backend,
            "Adobe Pass base URL (real or pass-sim); without it an in-process simulator runs.",
            none: "none (the in-process simulator)"
        ),
        .optionalString("metrics", \.configuration.metrics, "Serve Prometheus metrics at `/metrics` on HOST:PORT."),
        .optionalString("http", \.configuration.http, "Serve the control API over HTTP and the web console on HOST:PORT."),
        .optionalString(
            "http_token_file",
            \.configuration.httpTokenFile,
            "File with the bearer token HTTP clients must send; without one a token is generated at start into `<socket>.http-token`.",
            none: "none (or the http-token credential)"
        ),
        .int(
            "http_max_event_streams",
            \.configuration.httpMaxEventStreams,
            1...1_000_000,
            "Most event streams (`GET /events`) served at once; more get 503 with Retry-After.",
            none: "seven eighths of the HTTP listener's cap"
        ),
        .custom(
            "http_auth",
            .choice(["token", "none"]),
            "`token`: HTTP clients send the bearer token; `none`: no token, loopback only, on purpose.",
            default: { $0.configuration.httpAuth.rawValue },
            read: { state, node, path, reader throws(ConfigurationError) in
                guard let auth = HTTPAuth(rawValue: try reader.string(node, path)) else { throw reader.fail(path, "must be token or none") }
                state.configuration.httpAuth = auth
            }
        ),
        .custom(
            "print_codes",
            .bool,
            "Print the activation URL and each code on standard output.",
            default: { String($0.configuration.printsCodes) },
            read: { state, node, path, reader throws(ConfigurationError) in
                state.configuration.printCodes = try reader.bool(node, path)
            }
        ),
        .custom(
            "duration",
            .duration(bound: "longer than 0"),
            "Run this long, then stop gracefully and print the run's report.",
            default: { $0.configuration.runLength.map(DurationParser.format) ?? "until stopped" },
            read: { state, node, path, reader throws(ConfigurationError) in
                let length = try reader.duration(node, path)
                guard length > .zero else { throw reader.fail(path, "must be longer than 0") }
                state.configuration.runLength = length
            }
        ),
        .custom(
            "thresholds",
            .list("expressions such as `http_429_rate<0.01`"),
            "What the run must meet, checked on its report when it stops (exit 99 when one fails).",
            default: { $0.configuration.thresholds.isEmpty ? "none" : $0.configuration.thresholds.map(\.description).joined(separator: ", ") },
            read: { state, node, path, reader throws(ConfigurationError) in
                state.configuration.thresholds = []
                for (itemPath, item) in try reader.sequence(node, path, expected: "expected a list of expressions such as 'http_429_rate<0.01'") {
                    let expression = try reader.string(item, itemPath)
                    do throws(Threshold.ParseError) {
                        state.configuration.thresholds.append(try Threshold(parsing: expression))
                    } catch {
                        throw reader.fail(itemPath, error.description)
                    }
                }
            }
        ),
        .int(
            "max_concurrent_requests",
            \.configuration.maxConcurrentRequests,
            1...100_000,
            "Most backend calls under way at once, split evenly over `fleet_loops`; the next ones wait in order."
        ),
        .int("fleet_loops", \.configuration.fleetLoops, 1...64, "Event loops the devices are spread over.", none: "one per core"),
        .int(
            "subscriber_buffer",
            \.configuration.subscriberBuffer,
            16...1_000_000,
            "Live events buffered per subscriber before a slow one is cut off."
        ),
        .optionalDuration(
            "idle_timeout",
            \.configuration.idleTimeout,
            "Close a control or HTTP connection with no call, subscription or event stream in progress after this long without traffic."
        ),
        .optionalDuration(
            "read_timeout",
            \.configuration.readTimeout,
            "Close a connection whose control line, or HTTP request head and body, has not arrived whole this long after its first byte."
        ),
        .custom(
            "timer_slack",
            .duration(bound: "0…1s"),
            "How long after its deadline a device timer may fire, so timers due close together share one wake-up.",
            default: { DurationParser.format($0.configuration.timerSlack) },
            read: { state, node, path, reader throws(ConfigurationError) in
                let slack = try reader.duration(node, path)
                guard slack <= .seconds(1) else { throw reader.fail(path, "must be at most 1s (it is added to every poll's lateness)") }
                state.configuration.timerSlack = slack
            }
        ),
        .custom(
            "client_addresses",
            .string,
            "Addresses (CIDR ranges, single addresses) of `bind` and `forwarded-for` fleets that name none of their own.",
            default: { $0.configuration.clientAddresses ?? "bind 127.128.0.0/9, forwarded-for 198.18.0.0/15" },
            read: { state, node, path, reader throws(ConfigurationError) in
                state.configuration.clientAddresses = try reader.string(node, path)
            }
        ),
        .custom(
            "shard",
            .text("K/N"),
            "Run shard K of N (K from 0): a disjoint, stable slice of every fleet.",
            default: { $0.configuration.shard.map { "\($0)" } ?? "every device" },
            read: { state, node, path, reader throws(ConfigurationError) in
                switch Shard.parse(try reader.string(node, path)) {
                case .success(let shard): state.configuration.shard = shard
                case .failure(let problem): throw reader.fail(path, problem.reason)
                }
            }
        ),
        .choice(
            "poll_index",
            \.configuration.pollIndex,
            "Whether the poll log keeps its index by device; `none` trades slower per-device views for less CPU and disk per poll."
        ),
        .choice(
            "write_ahead",
            \.configuration.writeAhead,
            "Whether each backend request is stored before it is sent; `none` trades the accounting of answers in flight at a kill for less CPU."
        ),
        .choice(
            "http_version",
            \.configuration.tls.httpVersion,
            "HTTP version over TLS: `auto` (HTTP/2 when offered by ALPN, else HTTP/1.1), `1.1` or `2`."
        ),
        .section("tls", "How `https://` backends are spoken to: trust, names, client certificate, versions.", tls, at: \.configuration.tls),
        .choice("log_level", \.configuration.logLevel, "Log level.", ignoringCase: true),
        .section("simulator", "The in-process simulator: its address, auto-approval and HTTPS.", simulator, at: \.configuration),
        .section("retention", "How long the poll log and the event log are kept.", retention, at: \.configuration.retention),
        .custom(
            "defaults",
            .mapping,
            "Settings every fleet starts from, whatever the order of the keys: the keys of `fleets[]` but `name` and `count`.",
            default: { _ in "" },
            read: { state, node, path, reader throws(ConfigurationError) in
                try reader.apply(fleet, try reader.mapping(node, path), prefix: path, to: &state.defaults, inFleets: false)
            }
        ),
        .custom(
            "fleets",
            .list("fleets"),
            "The fleets, each over `defaults`; without it one fleet of `defaults` and the command line.",
            default: { _ in "one fleet" },
            read: { state, node, _, _ throws(ConfigurationError) in
                state.fleets = node
            }
        ).opening(fleet, defaults: FleetConfiguration(), path: "fleets[]"),
    ]

    /// `tls:`, the backend connections' TLS settings.
    static let tls: [ConfigurationKey<TLSClientSettings>] = [
        .optionalString("ca_file", \.caFile, "PEM bundle of certificate authorities to trust for an https:// backend, besides the system's."),
        .bool("ca_only", \.caOnly, "Trust only `tls.ca_file`, not the system's roots."),
        .optionalString(
            "server_name",
            \.serverName,
            "Name for SNI and the certificate check.",
            none: "the backend URL's host"
        ),
        .optionalString("client_certificate", \.clientCertificateFile, "PEM client certificate for mutual TLS (with `tls.client_key`)."),
        .optionalString(
            "client_key",
            \.clientKeyFile,
            "PEM private key of `tls.client_certificate`.",
            none: "none (or the tls-client-key credential)"
        ),
        .choice("min_version", \.minimumVersion, "Lowest TLS version accepted."),
        .bool("verify", \.verify, "Check the backend's certificate; `false` accepts any and is warned about."),
    ]

    /// `simulator:`, the embedded simulator's listen address, auto-approval and TLS.
    static let simulator: [ConfigurationKey<DaemonConfiguration>] = [
        .custom(
            "listen",
            .text("HOST:PORT"),
            "Address of the in-process simulator (port 0 picks one).",
            default: { "\($0.simulatorHost):\($0.simulatorPort)" },
            read: { configuration, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path)
                guard let hostPort = HostPort.parse(text) else { throw reader.fail(path, "'\(text)' is not HOST:PORT") }
                configuration.simulatorHost = hostPort.host
                configuration.simulatorPort = hostPort.port
            }
        ),
        .optionalDuration(
            "auto_approve_after",
            \.simulatorAutoApproveAfter,
            "Approve each code after this long.",
            none: "never"
        ),
        .bool("tls", \.simulatorTLS, "Serve HTTPS and HTTP/2 with a self-signed CA kept beside the database, which the devices trust."),
    ]

    /// `retention:`, how long poll attempts and events are kept.
    static let retention: [ConfigurationKey<RetentionConfiguration>] = [
        .optionalDuration("poll_attempts", \.pollAttempts, "How long poll attempts and requests are kept.", none: "forever"),
        .optionalDuration("events", \.events, "How long events are kept.", none: "forever"),
    ]
}
