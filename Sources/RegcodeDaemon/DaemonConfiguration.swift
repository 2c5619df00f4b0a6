import BackendHTTP
import DeviceFleet
import DeviceRegistry
import Foundation
import Logging
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import SoakReport

/// A configuration problem: which file, which key, and why.
package struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    package var file: String?
    package var key: String
    package var reason: String

    package init(file: String?, key: String, reason: String) {
        self.file = file
        self.key = key
        self.reason = reason
    }

    package var description: String {
        if let file { return "\(file): \(key): \(reason)" }
        return "\(key): \(reason)"
    }
}

/// Retention of the poll log and the event log, so long soaks stay bounded.
package struct RetentionConfiguration: Sendable, Equatable {
    package var pollAttempts: Duration? = .seconds(7 * 86_400)
    package var events: Duration? = .seconds(7 * 86_400)
    package init() {}
}

/// Everything the daemon runs with, after file and flags are merged.
package struct DaemonConfiguration: Sendable {
    /// Whether any fleet's devices log in with the OAuth device grant.
    var hasOAuthDeviceFleets: Bool { fleets.contains { $0.deviceProtocol == .oauthDevice } }

    package var configFile: String?
    package var database = "./regcoded.sqlite"
    package var socket = "./regcoded.sock"
    package var socketGroup: String?
    /// Adobe Pass base URL; `nil` runs the in-process simulator.
    package var backend: String?
    package var simulatorHost = "127.0.0.1"
    package var simulatorPort = 8080
    package var simulatorAutoApproveAfter: Duration?
    /// The embedded simulator serves HTTPS (HTTP/2 by ALPN) with a CA and certificate kept beside the database
    /// (``simulatorTLSDirectory``), which the devices trust.
    package var simulatorTLS = false
    package var metrics: String?
    /// `HOST:PORT` of the HTTP control listener (JSON-RPC, server-sent events, web console); nil serves none.
    package var http: String?
    /// A file holding the bearer token HTTP clients must send; without one (and with ``httpAuth`` `token`) the daemon
    /// generates a token at start into ``generatedHTTPTokenPath``.
    package var httpTokenFile: String?
    /// The most event streams (`GET /events`) the HTTP listener serves at once (`http_max_event_streams`), within the
    /// HTTP listener's connection cap; nil: most of that cap (see ``DescriptorBudget/eventStreams``).
    package var httpMaxEventStreams: Int?
    /// Whether HTTP clients need the bearer token (`http_auth`); `none` serves loopback without one, on purpose.
    package var httpAuth: HTTPAuth = .token
    package var logLevel: Logger.Level = .info
    package var retention = RetentionConfiguration()
    package var fleets: [FleetConfiguration] = [FleetConfiguration()]
    /// Print the activation URL and every code on standard output.
    package var printCodes: Bool?
    /// How long the run lasts (`duration`, `--duration`): then the daemon stops gracefully and reports; nil runs
    /// until stopped.
    package var runLength: Duration?
    /// What the run must meet (`thresholds`, `--threshold`), checked on the run's report when it stops.
    package var thresholds: [Threshold] = []
    package var maxConcurrentRequests = 256
    /// How long after its deadline a device timer may fire, so timers due close together share one wake-up
    /// (`timer_slack`; 0 fires each at its deadline). Planned and sent times are both recorded.
    package var timerSlack: Duration = .milliseconds(10)
    /// How many event loops the devices are spread over (`fleet_loops`; nil: one per core, as many as NIO's
    /// shared loops). A device stays on its loop; one loop is one thread's worth of polls.
    package var fleetLoops: Int?
    /// Live events buffered per subscriber before it is cut off.
    package var subscriberBuffer = 4096
    /// A control or HTTP connection with nothing in progress (no call, no subscription or event stream) is closed
    /// after this long without traffic (`idle_timeout`; nil never).
    package var idleTimeout: Duration? = .seconds(60)
    /// A control line, or an HTTP request's head and body, must arrive whole within this long of its first byte
    /// (`read_timeout`; nil never).
    package var readTimeout: Duration? = .seconds(10)
    /// The addresses (CIDR ranges, single addresses) of `bind` and `forwarded-for` fleets that name none of their own;
    /// nil: the mode's default.
    package var clientAddresses: String?
    /// The slice of every fleet this process runs (`--shard K/N`); nil runs every device.
    package var shard: Shard?
    /// Whether the poll log keeps its index by device (`poll_index`); `none` trades slower per-device
    /// views for less CPU and disk writing per poll at large fleets.
    package var pollIndex: RegcodeStore.PollIndex = .device
    /// Whether each backend request is stored before it is sent (`write_ahead`); `none` trades the accounting of
    /// answers in flight at a kill for less CPU per poll at the largest fleets.
    package var writeAhead: WriteAhead = .requests
    /// How `https://` backends are spoken to (`tls:` and `http_version`): trust, names, client certificate, versions.
    package var tls = TLSClientSettings()

    package init() {}

    /// Whether backend calls go over TLS.
    package var backendUsesTLS: Bool { backend.map { $0.lowercased().hasPrefix("https://") } ?? simulatorTLS }

    package var usesEmbeddedSimulator: Bool { backend == nil }

    /// Whether codes are printed: as configured, else always — with `--backend` too, since a person at the terminal
    /// needs the code whichever backend issued it (the systemd and Kubernetes configurations turn it off).
    package var printsCodes: Bool { printCodes ?? true }

    /// Whether the backend runs on this host (the embedded simulator, or a URL on loopback).
    package var backendIsLocal: Bool {
        guard let backend else { return true }
        guard let host = URL(string: backend)?.host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Where the embedded simulator keeps its state: beside the database (`x.sqlite` → `x.pass-sim.sqlite`).
    /// Warnings for fleets that reach a backend off this host with REST API v1 (end of support 2025-12-31, end of life
    /// at the end of 2026) or the legacy signed header, which DCR replaces (Adobe's product announcements).
    package var legacyAPIWarnings: [String] {
        guard !backendIsLocal else { return [] }
        return fleets.flatMap { fleet -> [String] in
            var warnings: [String] = []
            if fleet.profile == .v1 {
                warnings.append(
                    "fleet '\(fleet.name)' uses REST API v1, past Adobe's end of support (2025-12-31) and at its end of life at the end of 2026; move it to v2"
                )
            }
            if fleet.publicKey != nil {
                warnings.append(
                    "fleet '\(fleet.name)' signs with the legacy public key and secret, a mechanism DCR replaces and Adobe discontinues"
                )
            }
            return warnings
        }
    }

    package var simulatorStatePath: String { databaseStem + ".pass-sim.sqlite" }

    /// The database path without its `.sqlite`: what the files kept beside it are named after.
    private var databaseStem: String {
        let suffix = ".sqlite"
        return database.hasSuffix(suffix) ? String(database.dropLast(suffix.count)) : database
    }

    /// Where the embedded simulator's CA and certificate live with `simulator.tls`: beside the database
    /// (`x.sqlite` → `x.pass-sim-tls/`), so a restarted daemon keeps the CA.
    package var simulatorTLSDirectory: String { databaseStem + ".pass-sim-tls" }

    /// The TV Provider's identity provider key (Apple single sign-on), kept beside the database when a fleet emulates
    /// a TV Provider: `x.tv-provider-idp.key` (private, mode 0600) and `x.tv-provider-idp.pem` (the public key a
    /// separately started pass-sim trusts with `--tv-provider-idp-key`).
    package var tvProviderIdentityProviderKeyPath: String { databaseStem + ".tv-provider-idp.key" }
    package var tvProviderIdentityProviderPublicKeyPath: String { databaseStem + ".tv-provider-idp.pem" }

    /// Every configured device name, in fleet order (every shard's).
    package var deviceNames: [String] { fleets.flatMap(\.deviceNames) }

    /// The configured device names this process runs: its shard's, or all of them.
    package var shardDeviceNames: [String] {
        fleets.flatMap { fleet in fleet.deviceNames(in: shard) }
    }

    /// Checks cross-field rules; `file` names the config file in errors.
    package func validate() throws(ConfigurationError) {
        var seen = Set<String>()
        for (index, fleet) in fleets.enumerated() {
            let key = "fleets[\(index)]"
            if fleet.name.isEmpty || fleet.name.contains(where: { !($0.isLetter || $0.isNumber || "-_.".contains($0)) }) {
                throw ConfigurationError(file: configFile, key: "\(key).name", reason: "'\(fleet.name)' must be letters, digits, '-', '_' or '.'")
            }
            if fleet.count < 0 || fleet.count > 100_000 {
                throw ConfigurationError(file: configFile, key: "\(key).count", reason: "must be between 0 and 100000")
            }
            if fleet.requestor.isEmpty {
                throw ConfigurationError(file: configFile, key: "\(key).requestor", reason: "must not be empty")
            }
            if let problem = fleet.poll.validationErrors().first {
                throw ConfigurationError(file: configFile, key: "\(key).poll", reason: problem)
            }
            if fleet.profile == .v1, fleet.softwareStatementFile == nil, fleet.publicKey == nil, backend != nil {
                throw ConfigurationError(
                    file: configFile,
                    key: "\(key).profile",
                    reason: "v1 needs a software statement (DCR) or public_key + signing_secret_file"
                )
            }
            if fleet.persona.rules.launchCheck, fleet.profile != .v2 {
                throw ConfigurationError(file: configFile, key: "\(key).persona", reason: "the rest-v2 persona speaks REST API v2 only (profile: v2)")
            }
            if fleet.deviceProtocol == .oauthDevice {
                try validateOAuth(fleet, key: key)
            }
            if (fleet.publicKey == nil) != (fleet.signingSecretFile == nil) {
                throw ConfigurationError(file: configFile, key: "\(key).public_key", reason: "public_key and signing_secret_file go together")
            }
            for name in fleet.deviceNames where !seen.insert(name).inserted {
                throw ConfigurationError(file: configFile, key: "\(key).name", reason: "device name '\(name)' is produced by two fleets")
            }
        }
        if let backend, URL(string: backend)?.scheme.map({ ["http", "https"].contains($0) }) != true || Origin(baseURL: backend) == nil {
            throw ConfigurationError(file: configFile, key: "backend", reason: "'\(backend)' is not an http(s) URL")
        }
        if tls.caOnly, tls.caFile == nil {
            throw ConfigurationError(file: configFile, key: "tls.ca_only", reason: "needs tls.ca_file")
        }
        if (tls.clientCertificateFile == nil) != (tls.clientKeyFile == nil) {
            throw ConfigurationError(
                file: configFile,
                key: "tls.client_certificate",
                reason: "tls.client_certificate and tls.client_key (or the tls-client-key credential) go together"
            )
        }
        try validateClientAddresses()
        if let metrics, HostPort.parse(metrics) == nil {
            throw ConfigurationError(file: configFile, key: "metrics", reason: "'\(metrics)' is not HOST:PORT")
        }
        if let http {
            guard let address = HostPort.parse(http) else {
                throw ConfigurationError(file: configFile, key: "http", reason: "'\(http)' is not HOST:PORT")
            }
            try validateHTTPAuth(http: http, host: address.host)
        }
    }

    /// An OAuth fleet: none of Adobe's single sign-on (apps, the TV Provider, REST v2 identities), a client
    /// authentication its provider offers, and the key file `private_key_jwt` needs.
    private func validateOAuth(_ fleet: FleetConfiguration, key: String) throws(ConfigurationError) {
        if !fleet.apps.isEmpty || fleet.tvProvider != nil || fleet.ssoIdentity != nil {
            throw ConfigurationError(
                file: configFile,
                key: "\(key).protocol",
                reason: "an oauth-device fleet has no apps, tv_provider or sso_identity (Adobe Pass single sign-on)"
            )
        }
        let oauth = fleet.oauth.device
        let rules = oauth.provider.rules
        let authentication = oauth.clientAuthentication ?? rules.defaultClientAuthentication
        if !rules.supportedClientAuthentication.contains(authentication) {
            throw ConfigurationError(
                file: configFile,
                key: "\(key).oauth.client_authentication",
                reason:
                    "\(oauth.provider.rawValue) does not offer \(authentication.rawValue) (it offers \(rules.supportedClientAuthentication.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        if authentication == .privateKeyJWT, fleet.oauth.privateKeyFile == nil {
            throw ConfigurationError(file: configFile, key: "\(key).oauth.private_key_file", reason: "private_key_jwt needs the client's private key")
        }
    }

    /// Off loopback (by the addresses the host resolves to, not by how its name looks) only with the operator's own
    /// token file; `http_auth: none` never beside a token file.
    private func validateHTTPAuth(http: String, host: String) throws(ConfigurationError) {
        if httpAuth == .none, httpTokenFile != nil {
            throw ConfigurationError(file: configFile, key: "http_auth", reason: "none turns the token off, but http_token_file gives one")
        }
        if httpTokenFile == nil, !ListenAddress.isLoopback(host: host) {
            throw ConfigurationError(
                file: configFile,
                key: "http",
                reason:
                    "\(http) is reachable from other hosts: give a bearer token with http_token_file (--http-token-file) or the http-token credential, or listen on 127.0.0.1"
            )
        }
    }
}

extension DaemonConfiguration {
    /// Checks that the control socket can be created at `socket`, before the database is created:
    /// a daemon that would fail at bind time must not leave a new, empty database behind.
    ///
    /// The directory must exist and be writable, the path must fit `sockaddr_un`, and an existing
    /// entry must be a socket (a stale one is replaced at bind time; a live one is refused there).
    package func checkSocketPath() throws(ConfigurationError) {
        if let problem = Self.socketPathProblem(socket) {
            throw ConfigurationError(file: configFile, key: "socket", reason: problem)
        }
    }

    /// Why a Unix socket cannot be created at `path`, or nil when it can.
    static func socketPathProblem(_ path: String) -> String? {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        if path.isEmpty { return "the socket path is empty" }
        // sun_path holds the bytes and a terminating NUL.
        if path.utf8.count >= capacity {
            return "\(path) is \(path.utf8.count) bytes long; a Unix socket path must be under \(capacity)"
        }
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        var info = stat()
        guard stat(parent, &info) == 0 else {
            return errno == ENOENT
                ? "the directory \(parent) does not exist" : "cannot use the directory \(parent): \(String(cString: strerror(errno)))"
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(parent) is not a directory" }
        guard access(parent, W_OK | X_OK) == 0 else { return "the directory \(parent) is not writable" }
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {
            return "\(path) exists and is not a socket"
        }
        return nil
    }

    /// Embedded defaults; under systemd the state and runtime directories it hands over.
    package static func defaults(environment: [String: String]) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        if let state = firstDirectory(environment["STATE_DIRECTORY"]) {
            configuration.database = "\(state)/regcoded.sqlite"
        }
        if let runtime = firstDirectory(environment["RUNTIME_DIRECTORY"]) {
            configuration.socket = "\(runtime)/regcoded.sock"
        }
        // systemd's LoadCredential=http-token:… (and tls-client-key:…) hands secrets over without a file in the
        // configuration.
        if let credentials = firstDirectory(environment["CREDENTIALS_DIRECTORY"]) {
            if FileManager.default.fileExists(atPath: "\(credentials)/http-token") {
                configuration.httpTokenFile = "\(credentials)/http-token"
            }
            if FileManager.default.fileExists(atPath: "\(credentials)/tls-client-key") {
                configuration.tls.clientKeyFile = "\(credentials)/tls-client-key"
            }
        }
        return configuration
    }

    /// systemd passes colon-separated lists when a unit names several directories.
    static func firstDirectory(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value.split(separator: ":").first.map(String.init)
    }
}
