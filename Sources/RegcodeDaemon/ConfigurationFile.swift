import DeviceRegistry
import Foundation
import KeepAliveHTTP
import Logging
import RegcodeEngine
import RegcodeSupport
import SoakReport
import Yams

/// Reads the YAML configuration file. Unknown keys are errors (a typo must not silently fall
/// back to a default), and every error names the file, the key path and the reason.
public enum ConfigurationFile {
    public static func load(path: String, into base: DaemonConfiguration = DaemonConfiguration()) throws(ConfigurationError) -> DaemonConfiguration {
        let text: String
        switch readRegularFile(path) {
        case .success(let contents): text = contents
        case .failure(let problem): throw ConfigurationError(file: path, key: "(file)", reason: problem.reason)
        }
        return try parse(text, file: path, into: base)
    }

    /// Why a configuration or secret file cannot be read, in the words of the actual cause.
    struct FileProblem: Error {
        var reason: String
    }

    /// Reads a regular UTF-8 file. A directory, a device such as `/dev/null` or a FIFO is refused as
    /// "not a regular file" (a FIFO would block the start, `/dev/null` would silently mean "no
    /// settings"), and "permission denied" is said only when `open` says so.
    static func readRegularFile(_ path: String) -> Result<String, FileProblem> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(FileProblem(reason: errnoReason(errno))) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind = type == S_IFDIR ? "a directory" : type == S_IFCHR || type == S_IFBLK ? "a device" : "a special file"
            return .failure(FileProblem(reason: "is \(kind), not a regular file"))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileProblem(reason: errnoReason(errno))) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            return .failure(FileProblem(reason: "cannot read: \(error.localizedDescription)"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return .failure(FileProblem(reason: "is not UTF-8 text"))
        }
        return .success(text)
    }

    private static func errnoReason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case ENOTDIR: "a component of the path is not a directory"
        default: "cannot read: \(String(cString: strerror(code)))"
        }
    }

    public static func parse(
        _ text: String,
        file: String?,
        into base: DaemonConfiguration = DaemonConfiguration()
    ) throws(ConfigurationError) -> DaemonConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(file: file, key: "(syntax)", reason: "\(error)")
        }
        var configuration = base
        configuration.configFile = file
        guard let root else { return configuration }
        var reader = Reader(file: file)
        try reader.read(root, into: &configuration)
        return configuration
    }

    private struct Reader {
        let file: String?

        func fail(_ key: String, _ reason: String) -> ConfigurationError {
            ConfigurationError(file: file, key: key, reason: reason)
        }

        func mapping(_ node: Node, _ key: String) throws(ConfigurationError) -> [(String, Node)] {
            guard let mapping = node.mapping else { throw fail(key, "expected a mapping of keys to values") }
            var pairs: [(String, Node)] = []
            for (name, value) in mapping {
                guard let string = name.string else { throw fail(key, "keys must be strings") }
                pairs.append((string, value))
            }
            return pairs
        }

        func string(_ node: Node, _ key: String) throws(ConfigurationError) -> String {
            guard let scalar = node.scalar else { throw fail(key, "expected a single value") }
            return scalar.string
        }

        /// One value of a closed set, by its raw value (in any case when `ignoringCase`); a value outside it
        /// is refused with the whole set named.
        func choice<Value: RawRepresentable & CaseIterable>(
            _ node: Node,
            _ key: String,
            ignoringCase: Bool = false
        ) throws(ConfigurationError) -> Value where Value.RawValue == String {
            let text = try string(node, key)
            guard let value = Value(rawValue: ignoringCase ? text.lowercased() : text) else {
                throw fail(key, "'\(text)' is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        }

        func optionalString(_ node: Node, _ key: String) throws(ConfigurationError) -> String? {
            if node.null != nil { return nil }
            return try string(node, key)
        }

        func int(_ node: Node, _ key: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            let text = try string(node, key)
            guard let value = Int(text) else { throw fail(key, "'\(text)' is not a whole number") }
            guard range.contains(value) else { throw fail(key, "\(value) is outside \(range.lowerBound)…\(range.upperBound)") }
            return value
        }

        func double(_ node: Node, _ key: String) throws(ConfigurationError) -> Double {
            let text = try string(node, key)
            guard let value = Double(text), value.isFinite else { throw fail(key, "'\(text)' is not a number") }
            return value
        }

        func bool(_ node: Node, _ key: String) throws(ConfigurationError) -> Bool {
            let text = try string(node, key).lowercased()
            switch text {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: throw fail(key, "'\(text)' is not true or false")
            }
        }

        func duration(_ node: Node, _ key: String) throws(ConfigurationError) -> Duration {
            let text = try string(node, key)
            do {
                return try DurationParser.read(text)
            } catch {
                throw fail(key, error.description)
            }
        }

        func optionalDuration(_ node: Node, _ key: String) throws(ConfigurationError) -> Duration? {
            if node.null != nil { return nil }
            let text = try string(node, key)
            if ["off", "never", "none"].contains(text.lowercased()) { return nil }
            return try duration(node, key)
        }

        mutating func read(_ root: Node, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            var defaults = FleetConfiguration()
            var fleetsNode: Node?
            // `defaults` applies to fleets whatever order the keys come in.
            for (key, value) in try mapping(root, "(top level)") {
                switch key {
                case "database": configuration.database = try string(value, key)
                case "socket": configuration.socket = try string(value, key)
                case "socket_group": configuration.socketGroup = try optionalString(value, key)
                case "backend": configuration.backend = try optionalString(value, key)
                case "metrics": configuration.metrics = try optionalString(value, key)
                case "http": configuration.http = try optionalString(value, key)
                case "http_token_file": configuration.httpTokenFile = try optionalString(value, key)
                case "http_max_event_streams": configuration.httpMaxEventStreams = try int(value, key, range: 1...1_000_000)
                case "http_auth":
                    guard let auth = HTTPAuth(rawValue: try string(value, key)) else { throw fail(key, "must be token or none") }
                    configuration.httpAuth = auth
                case "print_codes": configuration.printCodes = try bool(value, key)
                case "duration":
                    let length = try duration(value, key)
                    guard length > .zero else { throw fail(key, "must be longer than 0") }
                    configuration.runLength = length
                case "thresholds":
                    guard let sequence = value.sequence else { throw fail(key, "expected a list of expressions such as 'http_429_rate<0.01'") }
                    configuration.thresholds = []
                    for (index, item) in sequence.enumerated() {
                        let path = "\(key)[\(index)]"
                        let expression = try string(item, path)
                        do {
                            configuration.thresholds.append(try Threshold(parsing: expression))
                        } catch {
                            throw fail(path, error.description)
                        }
                    }
                case "max_concurrent_requests": configuration.maxConcurrentRequests = try int(value, key, range: 1...100_000)
                case "fleet_loops": configuration.fleetLoops = try int(value, key, range: 1...64)
                case "subscriber_buffer": configuration.subscriberBuffer = try int(value, key, range: 16...1_000_000)
                case "idle_timeout": configuration.idleTimeout = try optionalDuration(value, key)
                case "read_timeout": configuration.readTimeout = try optionalDuration(value, key)
                case "timer_slack":
                    let slack = try duration(value, key)
                    guard slack <= .seconds(1) else { throw fail(key, "must be at most 1s (it is added to every poll's lateness)") }
                    configuration.timerSlack = slack
                case "client_addresses": configuration.clientAddresses = try string(value, key)
                case "shard":
                    let text = try string(value, key)
                    switch Shard.parse(text) {
                    case .success(let shard): configuration.shard = shard
                    case .failure(let problem): throw fail(key, problem.reason)
                    }
                case "poll_index": configuration.pollIndex = try choice(value, key)
                case "write_ahead": configuration.writeAhead = try choice(value, key)
                case "http_version": configuration.tls.httpVersion = try choice(value, key)
                case "tls": try readTLS(value, key: key, into: &configuration.tls)
                case "log_level": configuration.logLevel = try choice(value, key, ignoringCase: true)
                case "simulator": try readSimulator(value, key: key, into: &configuration)
                case "retention": try readRetention(value, key: key, into: &configuration.retention)
                case "defaults":
                    try readFleet(value, key: key, into: &defaults, allowNameAndCount: false)
                case "fleets":
                    fleetsNode = value
                default:
                    throw fail(key, "unknown key")
                }
            }
            try readFleets(fleetsNode, defaults: defaults, into: &configuration)
        }

        /// `tls:`, the backend connections' TLS settings.
        func readTLS(_ value: Node, key: String, into tls: inout TLSClientSettings) throws(ConfigurationError) {
            for (sub, subValue) in try mapping(value, key) {
                let path = "tls.\(sub)"
                switch sub {
                case "ca_file": tls.caFile = try optionalString(subValue, path)
                case "ca_only": tls.caOnly = try bool(subValue, path)
                case "server_name": tls.serverName = try optionalString(subValue, path)
                case "client_certificate": tls.clientCertificateFile = try optionalString(subValue, path)
                case "client_key": tls.clientKeyFile = try optionalString(subValue, path)
                case "min_version": tls.minimumVersion = try choice(subValue, path)
                case "verify": tls.verify = try bool(subValue, path)
                default: throw fail(path, "unknown key")
                }
            }
        }

        /// `simulator:`, the embedded simulator's listen address, auto-approval and TLS.
        func readSimulator(_ value: Node, key: String, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            for (sub, subValue) in try mapping(value, key) {
                let path = "simulator.\(sub)"
                switch sub {
                case "listen":
                    let text = try string(subValue, path)
                    guard let hostPort = HostPort.parse(text) else { throw fail(path, "'\(text)' is not HOST:PORT") }
                    configuration.simulatorHost = hostPort.host
                    configuration.simulatorPort = hostPort.port
                case "auto_approve_after": configuration.simulatorAutoApproveAfter = try optionalDuration(subValue, path)
                case "tls": configuration.simulatorTLS = try bool(subValue, path)
                default: throw fail(path, "unknown key")
                }
            }
        }

        /// `retention:`, how long poll attempts and events are kept.
        func readRetention(_ value: Node, key: String, into retention: inout RetentionConfiguration) throws(ConfigurationError) {
            for (sub, subValue) in try mapping(value, key) {
                let path = "retention.\(sub)"
                switch sub {
                case "poll_attempts": retention.pollAttempts = try optionalDuration(subValue, path)
                case "events": retention.events = try optionalDuration(subValue, path)
                default: throw fail(path, "unknown key")
                }
            }
        }

        /// `fleets:` (each over `defaults`), or the one fleet of `defaults` and the command line without it.
        func readFleets(_ fleetsNode: Node?, defaults: FleetConfiguration, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            if let fleetsNode {
                guard let sequence = fleetsNode.sequence else { throw fail("fleets", "expected a list of fleets") }
                var fleets: [FleetConfiguration] = []
                for (index, item) in sequence.enumerated() {
                    var fleet = defaults
                    try readFleet(item, key: "fleets[\(index)]", into: &fleet, allowNameAndCount: true)
                    fleets.append(fleet)
                }
                configuration.fleets = fleets
            } else {
                var fleet = defaults
                fleet.name = configuration.fleets.first?.name ?? fleet.name
                fleet.count = configuration.fleets.first?.count ?? fleet.count
                configuration.fleets = [fleet]
            }
        }

        /// `client_address: MODE`, or a mapping of `mode` and `addresses` (a string or a list).
        func readClientAddress(_ node: Node, key: String) throws(ConfigurationError) -> ClientAddressConfiguration {
            guard node.mapping != nil else { return ClientAddressConfiguration(mode: try choice(node, key)) }
            var configuration = ClientAddressConfiguration()
            for (sub, value) in try mapping(node, key) {
                let path = "\(key).\(sub)"
                switch sub {
                case "mode": configuration.mode = try choice(value, path)
                case "addresses":
                    if let sequence = value.sequence {
                        var items: [String] = []
                        for (index, item) in sequence.enumerated() { items.append(try string(item, "\(path)[\(index)]")) }
                        configuration.addresses = items.joined(separator: ", ")
                    } else {
                        configuration.addresses = try string(value, path)
                    }
                default: throw fail(path, "unknown key")
                }
            }
            return configuration
        }

        func readFleet(_ node: Node, key prefix: String, into fleet: inout FleetConfiguration, allowNameAndCount: Bool) throws(ConfigurationError) {
            for (key, value) in try mapping(node, prefix) {
                let path = "\(prefix).\(key)"
                switch key {
                case "name" where allowNameAndCount: fleet.name = try string(value, path)
                case "count" where allowNameAndCount: fleet.count = try int(value, path, range: 0...100_000)
                case "requestor": fleet.requestor = try string(value, path)
                case "profile":
                    let text = try string(value, path)
                    guard let profile = APIProfile(rawValue: text.lowercased()) else { throw fail(path, "'\(text)' is not v2 or v1") }
                    fleet.profile = profile
                case "mvpd": fleet.mvpd = try optionalString(value, path)
                case "scenario": fleet.scenario = try choice(value, path, ignoringCase: true)
                case "software_statement_file": fleet.softwareStatementFile = try optionalString(value, path)
                case "public_key": fleet.publicKey = try optionalString(value, path)
                case "signing_secret_file": fleet.signingSecretFile = try optionalString(value, path)
                case "poll": try readPoll(value, key: path, into: &fleet.poll)
                case "ramp": fleet.ramp = try optionalDuration(value, path)
                case "connections":
                    let text = try string(value, path)
                    guard let connections = FleetConnections(parsing: text) else {
                        throw fail(path, "'\(text)' is not shared, shared N (1…100000), per-device or per-request")
                    }
                    fleet.connections = connections
                case "domain_name": fleet.identity.domainName = try string(value, path)
                case "redirect_url": fleet.identity.redirectURL = try string(value, path)
                case "client_redirect_uri": fleet.identity.clientRedirectURI = try string(value, path)
                case "user_agent": fleet.identity.userAgent = try string(value, path)
                case "client_address": fleet.clientAddress = try readClientAddress(value, key: path)
                case "forwarded_for":
                    throw fail(path, "replaced by client_address: forwarded-for (was true) or client_address: host (was false)")
                case "device":
                    fleet.sso = try readDevice(value, key: path, base: fleet.sso ?? DeviceSSOSettings())
                case "tv_provider":
                    fleet.tvProvider = try readTVProvider(value, key: path)
                case "apps":
                    guard let sequence = value.sequence else { throw fail(path, "expected a list of apps") }
                    var apps: [AppConfiguration] = []
                    for (index, item) in sequence.enumerated() {
                        let app = try readApp(item, key: "\(path)[\(index)]")
                        if apps.contains(where: { $0.id == app.id }) { throw fail("\(path)[\(index)].id", "'\(app.id)' is listed twice") }
                        apps.append(app)
                    }
                    fleet.apps = apps
                case "sso_identity": fleet.ssoIdentity = try readSSOIdentity(value, key: path, base: fleet.ssoIdentity)
                case "login":
                    for (sub, subValue) in try mapping(value, path) {
                        let subPath = "\(path).\(sub)"
                        switch sub {
                        case "provider": fleet.loginProvider = try choice(subValue, subPath, ignoringCase: true)
                        case "temppass_email": fleet.tempPassEmail = try optionalString(subValue, subPath)
                        default: throw fail(subPath, "unknown key")
                        }
                    }
                case "cycle":
                    for (sub, subValue) in try mapping(value, path) {
                        let subPath = "\(path).\(sub)"
                        switch sub {
                        case "hold": fleet.cycle.hold = try duration(subValue, subPath)
                        case "authorize_every":
                            let every = try duration(subValue, subPath)
                            guard every >= .seconds(1) else { throw fail(subPath, "must be at least 1s") }
                            fleet.cycle.authorizeEvery = every
                        case "resource": fleet.cycle.resource = try string(subValue, subPath)
                        default: throw fail(subPath, "unknown key")
                        }
                    }
                default: throw fail(path, "unknown key")
                }
            }
        }

        /// `device:` — what the devices of a fleet are, for single sign-on.
        func readDevice(_ node: Node, key prefix: String, base: DeviceSSOSettings) throws(ConfigurationError) -> DeviceSSOSettings {
            var settings = base
            for (key, value) in try mapping(node, prefix) {
                let path = "\(prefix).\(key)"
                switch key {
                case "platform":
                    let text = try string(value, path).lowercased()
                    guard let family = DevicePlatform.Family(rawValue: text) else { throw fail(path, "'\(text)' is not tvos or ios") }
                    settings.platform.family = family
                case "os_version": settings.platform.osVersion = try version(value, path)
                case "storage_scope": settings.storage.scope = try choice(value, path, ignoringCase: true)
                case "ad_hoc_private": settings.storage.adHocPrivate = try bool(value, path)
                default: throw fail(path, "unknown key")
                }
            }
            return settings
        }

        /// `tv_provider:` — the TV Provider (Apple single sign-on) each device starts with.
        func readTVProvider(_ node: Node, key prefix: String) throws(ConfigurationError) -> TVProviderDevice {
            var state = TVProviderDevice()
            var provider: String?
            var user = TVProviderUser(userID: "tv-provider-user")
            for (key, value) in try mapping(node, prefix) {
                let path = "\(prefix).\(key)"
                switch key {
                case "provider": provider = try optionalString(value, path)
                case "user_id": user.userID = try string(value, path)
                case "household_id": user.householdID = try string(value, path)
                case "zip": user.zip = try string(value, path)
                case "access": state.defaultAccess = try choice(value, path)
                case "picker_answer":
                    let text = try string(value, path)
                    state.pickerAnswer = text == "wait" ? nil : TVProviderDevice.PickerAnswer(text)
                default: throw fail(path, "unknown key")
                }
            }
            // A configured account does not expire on its own; the lab signs it out (vsa.signOut) or sets an expiry (vsa.signIn).
            if let provider { state.account = TVProviderAccount(providerID: provider, user: user, expiresEpochMs: Int64.max) }
            return state
        }

        /// `sso_identity:` — the REST v2 single sign-on identities the fleet's devices present (sso.md §3.3):
        /// `platform_user` (platform identity `sub`), `roku_header` (send it as Roku's header), `service_user`
        /// (service token `sub`). Null or empty users mean none; a section naming no user means no identity.
        func readSSOIdentity(_ node: Node, key prefix: String, base: SSOIdentitySettings?) throws(ConfigurationError) -> SSOIdentitySettings? {
            if node.null != nil { return nil }
            var settings = base ?? SSOIdentitySettings()
            for (key, value) in try mapping(node, prefix) {
                let path = "\(prefix).\(key)"
                switch key {
                case "platform_user": settings.platformUser = try optionalString(value, path).flatMap { $0.isEmpty ? nil : $0 }
                case "roku_header": settings.rokuHeader = try bool(value, path)
                case "service_user": settings.serviceUser = try optionalString(value, path).flatMap { $0.isEmpty ? nil : $0 }
                default: throw fail(path, "unknown key")
                }
            }
            return settings.isEmpty ? nil : settings
        }

        /// One entry of `apps:`.
        func readApp(_ node: Node, key prefix: String) throws(ConfigurationError) -> AppConfiguration {
            var id: String?
            var bundleId: String?
            var teamId: String?
            var app = AppConfiguration(id: "", bundleId: "", teamId: "")
            for (key, value) in try mapping(node, prefix) {
                let path = "\(prefix).\(key)"
                switch key {
                case "id": id = try string(value, path)
                case "bundle_id": bundleId = try string(value, path)
                case "team_id": teamId = try string(value, path)
                case "requestor": app.requestor = try string(value, path)
                case "access_enabler": app.accessEnabler = try version(value, path)
                case "install_source": app.installSource = try choice(value, path)
                default: throw fail(path, "unknown key")
                }
            }
            guard let bundleId, !bundleId.isEmpty else { throw fail("\(prefix).bundle_id", "missing") }
            guard let teamId, !teamId.isEmpty else { throw fail("\(prefix).team_id", "missing") }
            app.bundleId = bundleId
            app.teamId = teamId
            app.id = id ?? bundleId
            guard app.id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw fail("\(prefix).id", "'\(app.id)' must be letters, digits, '-', '_' or '.'")
            }
            return app
        }

        func version(_ node: Node, _ key: String) throws(ConfigurationError) -> SemanticVersion {
            let text = try string(node, key)
            guard let version = SemanticVersion(text) else { throw fail(key, "'\(text)' is not a version such as 1.10 or 3.7.0") }
            return version
        }

        func readPoll(_ node: Node, key prefix: String, into policy: inout PollPolicy) throws(ConfigurationError) {
            var renewals: Int?
            var onExpiry: String?
            let pairs = try mapping(node, prefix)
            // A preset sets the baseline; the other keys refine it, whatever their order.
            if let presetNode = pairs.first(where: { $0.0 == "preset" })?.1 {
                let preset: PollPreset = try choice(presetNode, "\(prefix).preset", ignoringCase: true)
                policy = preset.policy
            }
            for (key, value) in pairs {
                let path = "\(prefix).\(key)"
                switch key {
                case "interval": policy.interval = try duration(value, path)
                case "jitter":
                    let jitter = try double(value, path)
                    guard (0...0.5).contains(jitter) else { throw fail(path, "\(jitter) is outside 0…0.5 (0.1 = ±10 %)") }
                    policy.jitter = jitter
                case "first_poll_delay": policy.firstPollDelay = try duration(value, path)
                case "backoff_base": policy.backoffBase = try duration(value, path)
                case "backoff_cap": policy.backoffCap = try duration(value, path)
                case "min_throttle_wait": policy.minimumThrottleWait = try duration(value, path)
                case "honour_throttle", "honor_throttle": policy.honoursThrottle = try bool(value, path)
                case "max_consecutive_errors":
                    policy.maxConsecutiveErrors = value.null != nil ? nil : try int(value, path, range: 1...1_000_000)
                case "code_request_retries": policy.codeRequestRetries = try int(value, path, range: 0...100)
                case "stage_retries": policy.stageRetries = try int(value, path, range: 0...100)
                case "action_retries": policy.actionRetries = try int(value, path, range: 0...100)
                case "stage_backoff_base": policy.stageBackoffBase = try duration(value, path)
                case "stage_backoff_cap": policy.stageBackoffCap = try duration(value, path)
                case "code_recoveries": policy.codeRecoveries = try int(value, path, range: 0...100)
                case "misbehaving": policy.misbehaving = try bool(value, path)
                case "preset": continue
                case "on_expiry": onExpiry = try string(value, path).lowercased()
                case "renewals": renewals = try int(value, path, range: 0...1000)
                default: throw fail(path, "unknown key")
                }
            }
            switch onExpiry {
            case nil:
                if let renewals { policy.onExpiry = renewals > 0 ? .renew(times: renewals) : .stop }
            case "stop": policy.onExpiry = .stop
            case "renew": policy.onExpiry = .renew(times: renewals ?? 1)
            case let other?: throw fail("\(prefix).on_expiry", "'\(other)' is not stop or renew")
            }
            if let problem = policy.validationErrors().first {
                throw fail(prefix, problem)
            }
        }
    }
}
