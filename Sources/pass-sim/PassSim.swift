import ArgumentParser
import Hummingbird
import Logging
import PassSimulator
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct PassSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pass-sim",
        abstract:
            "A simulated Adobe Pass backend (DCR, REST API v2, legacy REST API v1) with a second-screen activation page, fault injection and an admin API.",
        usage: """
            pass-sim [<options>]
            pass-sim statement --software-id <id> (--statement-key <file> | --state <path>) [--redirect-uri <uri> ...]
            """,
        discussion: """
            By default the simulator is at least as strict as Adobe;
            --lenient turns these checks off:
              - an access token works only for the requestors of its software
                statement (else 401 invalid_access_token_service_provider;
                v1: 401 Not Authorized);
              - only configured requestors are known (--requestor; else 400
                invalid_parameter_service_provider; v1: 400 Bad Request);
              - an MVPD must be integrated with the requestor (--integration;
                else 400 invalid_integration; v1: 400 Bad Request; the
                second-screen pages show an error);
              - registration needs a software statement signed with the
                simulator's statement key (else 400 invalid_software_statement;
                --accept-unsigned-statements checks only its structure and an
                approved software_id, --software-statement, else 400
                unapproved_software_statement) and a redirect_uri the statement
                lists (else 400 invalid_redirect_uri);
              - v2 sessions: a domainName the requestor lists, or a subdomain
                of one (else 400 invalid_parameter_domain_name), and an absolute
                redirectUrl (else 400 invalid_parameter_redirect_url); a session
                lacking mvpd, domainName or redirectUrl is answered resume with
                missingParameters, and its code authenticates only once resumed;
              - v1 config needs the DCR bearer token or the signed header
                (else 401 Not Authorized);
              - the documented Content-Type: DCR register application/json and
                DCR token application/x-www-form-urlencoded (else 400
                invalid_request); v2 sessions create and resume
                application/x-www-form-urlencoded and decisions
                application/json (else 415 unsupported_media_type);
              - X-Device-Info present and Base64 on DCR register and token
                (else 400 invalid_request) and on v2 sessions create,
                profiles, profiles/{mvpd}, decisions and logout (else 400
                invalid_header_device_info).
            Errors use Adobe's bodies: enhanced errors (v2), {"error": …} (DCR),
            the classic body (v1).

            Throttling is Adobe's token bucket (10 burst, 1 per second) on every
            path Adobe throttles, DCR included, keyed by the connection's
            (peer) address; with --trust-forwarded-for (a proxy in front, as
            at a proxy-facing edge) by the first X-Forwarded-For address
            instead (--throttle-key device keys it by device). GET
            /_sim/stats counts the distinct peer addresses seen.

            With --state FILE, clients, access tokens, codes, profiles, v1 tokens
            and authorizations and the deny lists are kept in that SQLite file
            and loaded again at start; an answer is sent only once what it
            reports is written. A file that is not pass-sim's is refused and
            left untouched.

            Single sign-on (REST v2): Apple partner SSO (sessions/sso/Apple,
            profiles/sso/Apple, the MVPD from AP-Partner-Framework-Status; the
            SAML answer must be signed by the MVPD identity provider key given
            with --tv-provider-idp-key or per MVPD in --sso-config
            samlIdentityProviders, e.g. regcoded's x.tv-provider-idp.pem
            beside its database), platform identity
            (Adobe-Subject-Token, X-Roku-Reserved-Roku-Connect-Token) and
            service tokens (AD-Service-Token). Tokens come from
            POST /_sim/identity/platform-token and /_sim/identity/service-token
            or from the identityIssuers of --sso-config; a missing or invalid
            header is ignored, never an error. GET /_sim/sso shows the SSO state.

            Entitlement variants (REST v2, --entitlements or PUT
            /_sim/entitlements): TempPass and promotional TempPass MVPDs
            (isTempPass, temporary profiles, temporary_access_* when spent;
            reset at DELETE /reset-tempass/v3/reset as Adobe's API, or
            DELETE /_sim/temppass), degradation rules per requestor x MVPD
            (AuthNAll, AuthZAll, AuthZNone), home-based authentication per
            MVPD (hba_status from the device address, out of home:
            authorization_denied_by_hba_policies), and item errors per
            resource or MVPD (parental controls, network_*).
            Software statements: the simulator signs and checks them with an RSA
            key kept in --statement-key FILE, else beside --state FILE (its name
            without .sqlite, then .statement-key.pem), else made for this run
            only; the file is created once and kept. `pass-sim statement
            --software-id ID --statement-key FILE` prints one, and
            POST /_sim/statements {"software_id": …, "redirect_uris"?: […]}
            issues one.

            REST API v1 is past Adobe's end of support (2025-12-31) and ends at the
            end of 2026; the AccessEnabler SDKs lost support on 2026-05-31 and end
            at the same time.

            HTTPS: --tls-cert/--tls-key serve a certificate you have;
            --tls-self-signed DIR keeps a lab CA and a certificate for
            localhost, 127.0.0.1, ::1 and the --listen host in DIR (the CA is
            reused, so clients set tls.ca_file: DIR/ca.pem once). HTTP/2 and
            HTTP/1.1 are offered by ALPN (--no-http2: HTTP/1.1 only);
            --tls-client-ca requires client certificates (mutual TLS).
            GET /_sim/stats counts connections by wire.
            """,
        version: RegcodeVersion.current,
        subcommands: [StatementCommand.self]
    )

    @Option(name: .long, help: ArgumentHelp("SQLite file keeping the simulator's state across restarts (created with mode 0600).", valueName: "path"))
    var state: String?

    @Flag(name: .long, help: "Relax the checks Adobe makes (see above): any requestor, MVPD, software statement, Content-Type, X-Device-Info.")
    var lenient = false

    @Option(
        name: .customLong("requestor"),
        help: ArgumentHelp("A known requestor (service provider) id; repeatable; replaces the default REF30.", valueName: "id")
    )
    var requestors: [String] = []

    @Flag(name: .long, help: "Know every well-formed requestor id, not only the --requestor ones.")
    var anyRequestor = false

    @Option(
        name: .customLong("integration"),
        help: ArgumentHelp(
            "Integrate MVPDs with a requestor (repeatable); with any --integration, only the listed pairs are integrated (default: every MVPD with every requestor).",
            valueName: "requestor=mvpd[,mvpd…]"
        )
    )
    var integrations: [Integration] = []

    @Option(
        name: .customLong("software-statement"),
        help: ArgumentHelp(
            "Approve a software_id, optionally only for some requestors (repeatable; regcoded's embedded statement and Adobe's documentation sample are always approved).",
            valueName: "software_id[=requestor,…]"
        )
    )
    var softwareStatements: [ApprovedStatement] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "RSA key file software statements are signed and checked with (created once, mode 0600; default: beside --state, else one per run).",
            valueName: "file"
        )
    )
    var statementKey: String?

    @Flag(name: .long, help: "Accept software statements not signed with the statement key (old set-ups); said in the log at start.")
    var acceptUnsignedStatements = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the rate limit is keyed by: the client address (the peer; X-Forwarded-For with --trust-forwarded-for), or the device.",
            valueName: "ip|device"
        )
    )
    var throttleKey = ThrottleKeyOption(.ip)

    @Flag(
        name: .long,
        help:
            "Take a request's client address from the first X-Forwarded-For address (the throttle, the sessions' peer address), as behind a trusted proxy; without it the header is ignored and the peer address counts."
    )
    var trustForwardedFor = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON file with the SSO sections: mvpds (with platform fields), integrations (SSO settings per requestor×MVPD), identityIssuers.",
            valueName: "path"
        )
    )
    var ssoConfig: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON file with the entitlement variants (the shape of PUT /_sim/entitlements): tempPass, degradation, homeNetworks, itemErrors.",
            valueName: "path"
        )
    )
    var entitlements: String?

    @Option(
        name: .customLong("v2-profile-scope"),
        help: ArgumentHelp(
            "What basic v2 profiles are bound to: device+client (Adobe) or device (every app of a device shares them; not faithful).",
            valueName: "device+client|device"
        )
    )
    var v2ProfileScope: ProfileScopeOption = ProfileScopeOption(.deviceAndClient)

    @Flag(name: .long, help: "Require AP-Partner-Framework-Status on decisions for appleSSO profiles (Adobe only documents it as accepted).")
    var requirePfsOnDecisions = false

    @Option(
        name: .customLong("tv-provider-idp-key"),
        help: ArgumentHelp(
            "PEM public key or certificate (P-256) of the MVPD identity provider that signs Apple SSO SAML answers, for every MVPD without its own (regcoded writes x.tv-provider-idp.pem beside its database).",
            valueName: "file"
        )
    )
    var tvProviderIdpKey: String?

    @Flag(name: .long, help: "Accept Apple SSO SAML answers not signed by a trusted identity provider (setups from before signed answers; logged).")
    var acceptUnsignedSaml = false

    @Option(name: .long, help: ArgumentHelp("Address to listen on.", valueName: "host:port"))
    var listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080)

    @Option(name: .long, help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (needs --tls-key).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Serve HTTPS with a lab CA and certificate kept in this directory; clients trust DIR/ca.pem.", valueName: "dir")
    )
    var tlsSelfSigned: String?

    @Option(name: .long, help: ArgumentHelp("Require client certificates issued by a CA in this PEM file (mutual TLS).", valueName: "file"))
    var tlsClientCa: String?

    @Flag(name: .long, help: "Offer only HTTP/1.1 over TLS, not HTTP/2.")
    var noHttp2 = false

    @Option(name: .long, help: ArgumentHelp("Complete every code automatically this many seconds after it was issued.", valueName: "seconds"))
    var autoApproveAfter: Seconds?

    @Option(name: .long, help: ArgumentHelp("Lifetime of authentication codes.", valueName: "seconds"))
    var codeTtl: Seconds = Seconds(1800)

    @Flag(name: .long, help: "Disable the rate limit (10 requests burst, 1 per second).")
    var noThrottle = false

    @Option(name: .long, help: ArgumentHelp("Log level.", valueName: "level"))
    var logLevel: LogLevel = LogLevel(.info)

    @Option(
        name: .customLong("signing-key"),
        help: ArgumentHelp(
            "Accept v1 requests signed with this key pair (repeatable; the lab pair samplePublicKey:sampleSecretKey is always accepted).",
            valueName: "public:secret"
        )
    )
    var signingKeys: [SigningKey] = []

    @Option(
        name: .customLong("deny-resource"),
        help: ArgumentHelp("Deny authorization of a resource, with an optional details text (repeatable).", valueName: "resource[=details]")
    )
    var denyResources: [Denial] = []

    @Option(
        name: .customLong("deny-mvpd"),
        help: ArgumentHelp("Deny every resource to users of an MVPD, with an optional details text (repeatable).", valueName: "mvpd[=details]")
    )
    var denyMVPDs: [Denial] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Script every new code: approve after SECONDS, deny after SECONDS, or never complete.",
            valueName: "approve[:s]|deny[:s]|never"
        )
    )
    var script: Script?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON fault configuration, the shape PUT /_sim/faults takes: \"default\" (or \"all\") and the classes dcr, sessions, poll, decisions, config, other; the --fault-* flags override its default.",
            valueName: "file"
        )
    )
    var faults: String?

    @Option(name: .customLong("fault-5xx"), help: ArgumentHelp("Probability of a 5xx answer (500, 502 or 503).", valueName: "p"))
    var fault5xx: Probability?

    @Option(name: .customLong("fault-429"), help: ArgumentHelp("Probability of a 429 without Retry-After.", valueName: "p"))
    var fault429: Probability?

    @Option(name: .customLong("fault-429-retry-after"), help: ArgumentHelp("Probability of a 429 with Retry-After.", valueName: "p"))
    var fault429RetryAfter: Probability?

    @Option(name: .customLong("retry-after"), help: ArgumentHelp("Retry-After value of injected 429s.", valueName: "seconds"))
    var retryAfter: Int?

    @Option(name: .customLong("fault-drop"), help: ArgumentHelp("Probability that the connection is closed without an answer.", valueName: "p"))
    var faultDrop: Probability?

    @Option(name: .customLong("fault-malformed"), help: ArgumentHelp("Probability of a 200 with a truncated body.", valueName: "p"))
    var faultMalformed: Probability?

    @Option(
        name: .customLong("fault-token-expiry"),
        help: ArgumentHelp("Probability that a protected call is answered 401 as if its token expired.", valueName: "p")
    )
    var faultTokenExpiry: Probability?

    @Option(
        name: .customLong("fault-early-expiry"),
        help: ArgumentHelp("Probability that a new code dies at a random point of its TTL.", valueName: "p")
    )
    var faultEarlyExpiry: Probability?

    @Option(
        name: .long,
        help: ArgumentHelp("Latency added to every API answer: fixed milliseconds plus a uniform random spread.", valueName: "ms[+spread]")
    )
    var latency: Latency?

    @Option(
        name: .customLong("fault-latency-spike"),
        help: ArgumentHelp("Probability that an API answer is held back by a latency spike.", valueName: "p")
    )
    var faultLatencySpike: Probability?

    @Option(name: .customLong("latency-spike"), help: ArgumentHelp("Length of a latency spike (default 5000).", valueName: "ms"))
    var latencySpikeMs: Int?

    @Option(name: .long, help: ArgumentHelp("Seed of the fault-injection random generator, for reproducible runs.", valueName: "n"))
    var seed: UInt64?

    func validate() throws {
        if self.codeTtl.value <= 0 {
            throw ValidationError("--code-ttl must be greater than 0 seconds.")
        }
        if let retryAfter, retryAfter < 0 {
            throw ValidationError("--retry-after must not be negative.")
        }
        if let latencySpikeMs, latencySpikeMs < 0 {
            throw ValidationError("--latency-spike must not be negative.")
        }
        if (self.tlsCert == nil) != (self.tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        if self.tlsSelfSigned != nil, self.tlsCert != nil {
            throw ValidationError("--tls-self-signed makes its own certificate; use it or --tls-cert/--tls-key, not both.")
        }
        if self.tlsCert == nil, self.tlsSelfSigned == nil {
            if self.tlsClientCa != nil {
                throw ValidationError("--tls-client-ca needs HTTPS: add --tls-cert/--tls-key or --tls-self-signed.")
            }
            if self.noHttp2 {
                throw ValidationError("--no-http2 needs HTTPS (plain HTTP is HTTP/1.1 only): add --tls-cert/--tls-key or --tls-self-signed.")
            }
        }
    }

    /// The statement key (from --statement-key, else beside --state, else for this run) and whether unsigned
    /// statements are accepted, both said in the log.
    func configureStatements(_ configuration: inout SimulatorConfiguration, logger: Logger) throws {
        configuration.acceptUnsignedStatements = self.acceptUnsignedStatements
        if let path = self.statementKey ?? self.state.map(SoftwareStatementKey.path(besideState:)) {
            do {
                let (key, created) = try SoftwareStatementKey.loadOrCreate(path: path)
                configuration.statementKey = key
                logger.info("software statement key", metadata: ["sim.statement_key": .string(path), "sim.statement_key_created": "\(created)"])
            } catch {
                writeError("pass-sim: \(error.description)")
                throw ExitCode.failure
            }
        } else {
            logger.info(
                "software statement key generated for this run only; statements come from POST /_sim/statements (--statement-key keeps one)"
            )
        }
        if self.acceptUnsignedStatements || self.lenient {
            logger.warning(
                "software statements are accepted unsigned: only their structure and an approved software_id are checked",
                metadata: ["sim.accept_unsigned_statements": "true"]
            )
        }
    }

    /// The HTTPS settings of the TLS flags (with --tls-self-signed, after preparing its directory), `nil` without them.
    func tlsSettings(logger: Logger) throws -> SimulatorTLS? {
        var tls: SimulatorTLS
        if let directory = self.tlsSelfSigned {
            let host = self.listen.host
            var names = ["localhost", "127.0.0.1", "::1"]
            if host != "0.0.0.0", host != "::", !names.contains(host) { names.append(host) }
            let prepared: TestCertificateDirectory
            do {
                prepared = try TestCertificateDirectory.prepare(directory, serverNames: names)
            } catch {
                writeError("pass-sim: --tls-self-signed: \(error.description)")
                throw ExitCode.failure
            }
            let caPath =
                prepared.caCertificatePath.hasPrefix("/")
                ? prepared.caCertificatePath : FileManager.default.currentDirectoryPath + "/" + prepared.caCertificatePath
            logger.info(
                "lab TLS directory ready",
                metadata: [
                    "sim.tls.ca": .string(caPath), "sim.tls.ca_created": .stringConvertible(prepared.createdAuthority),
                    "sim.tls.certificate_issued": .stringConvertible(prepared.issuedCertificate),
                    "sim.tls.names": .array(names.map { .string($0) }),
                ]
            )
            writeLine("pass-sim TLS: clients trust \(caPath) (tls.ca_file)\(prepared.createdAuthority ? "; this CA is new" : "")")
            tls = SimulatorTLS(certificateChainPath: prepared.certificatePath, privateKeyPath: prepared.privateKeyPath)
        } else if let certificate = self.tlsCert, let key = self.tlsKey {
            tls = SimulatorTLS(certificateChainPath: certificate, privateKeyPath: key)
        } else {
            return nil
        }
        tls.clientCAPath = self.tlsClientCa
        tls.protocols = self.noHttp2 ? .http1Only : .http2AndHTTP1
        do {
            try tls.validate()
        } catch {
            writeError("pass-sim: \(error.description)")
            throw ExitCode.failure
        }
        return tls
    }

    /// The fault settings: the `--faults` file, with the `--fault-*` flags and `--latency` overriding its default.
    func faultConfiguration() throws -> FaultConfiguration {
        var configuration = FaultConfiguration()
        if let path = self.faults {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("--faults: cannot read \(path).")
            }
            do {
                configuration = try JSONDecoder().decode(FaultConfiguration.self, from: data)
            } catch {
                throw ValidationError("--faults: \(path) is not a fault configuration (\(error)).")
            }
        }
        var defaults = configuration.defaults
        if let value = self.fault5xx?.value { defaults.error5xx = value }
        if let value = self.fault429?.value { defaults.throttle429 = value }
        if let value = self.fault429RetryAfter?.value { defaults.throttle429RetryAfter = value }
        if let value = self.retryAfter { defaults.retryAfterSeconds = value }
        if let value = self.faultDrop?.value { defaults.drop = value }
        if let value = self.faultMalformed?.value { defaults.malformed = value }
        if let value = self.faultTokenExpiry?.value { defaults.tokenExpiry = value }
        if let value = self.faultEarlyExpiry?.value { defaults.earlyExpiry = value }
        if let latency = self.latency {
            defaults.latencyMs = latency.fixed
            defaults.latencySpreadMs = latency.spread
        }
        if let value = self.faultLatencySpike?.value { defaults.latencySpike = value }
        if let value = self.latencySpikeMs { defaults.latencySpikeMs = value }
        configuration.defaults = defaults
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("Fault settings: \(error.description).")
        }
        return configuration
    }

    func run() async throws {
        LoggingSystem.bootstrap(DeferredMetadataLogHandler.standardError)
        var logger = Logger(label: "pass-sim")
        logger.logLevel = self.logLevel.level

        var configuration = SimulatorConfiguration()
        configuration.codeTTL = self.codeTtl.duration
        configuration.autoApproveAfter = self.autoApproveAfter?.duration
        configuration.throttleEnabled = !self.noThrottle
        for key in self.signingKeys {
            configuration.signingKeys[key.publicKey] = key.secret
        }
        configuration.denyResources = Dictionary(self.denyResources.map { ($0.name, $0.details) }) { _, last in last }
        configuration.denyMVPDs = Dictionary(self.denyMVPDs.map { ($0.name, $0.details) }) { _, last in last }
        configuration.defaultCodeScript = self.script?.script
        configuration.faults = try self.faultConfiguration()
        configuration.faultSeed = self.seed
        configuration.statePath = self.state
        configuration.lenient = self.lenient
        configuration.throttleKey = self.throttleKey.key
        configuration.trustForwardedFor = self.trustForwardedFor
        if self.anyRequestor {
            configuration.serviceProviders = nil
        } else if !self.requestors.isEmpty {
            configuration.serviceProviders = Set(self.requestors)
        }
        if !self.integrations.isEmpty {
            configuration.integrations = Dictionary(self.integrations.map { ($0.requestor, $0.mvpds) }) { $0.union($1) }
        }
        for statement in self.softwareStatements {
            configuration.approvedSoftwareStatements[statement.softwareId, default: []].formUnion(statement.requestors)
        }
        try self.configureStatements(&configuration, logger: logger)

        configuration.tls = try self.tlsSettings(logger: logger)
        configuration.v2ProfileScope = self.v2ProfileScope.scope
        configuration.requirePFSForAppleSSODecisions = self.requirePfsOnDecisions
        if let path = self.ssoConfig {
            do {
                try SSOConfigurationFile.load(path: path).apply(to: &configuration)
            } catch let error as SSOConfigurationError {
                writeError("pass-sim: \(path): \(error.description)")
                throw ExitCode.failure
            } catch {
                writeError("pass-sim: cannot read \(path): \(error)")
                throw ExitCode.failure
            }
        }
        if let path = self.tvProviderIdpKey {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
                writeError("pass-sim: cannot read \(path)")
                throw ExitCode.failure
            }
            configuration.samlTrust.defaultKeyPEM = String(decoding: data, as: UTF8.self)
        }
        configuration.samlTrust.acceptUnsigned = self.acceptUnsignedSaml
        if let problem = configuration.samlTrust.problem {
            writeError("pass-sim: \(problem)")
            throw ExitCode.failure
        }
        if self.acceptUnsignedSaml {
            logger.warning("--accept-unsigned-saml: Apple SSO SAML answers are accepted without a trusted signature; Adobe would refuse them")
        }

        if let path = self.entitlements {
            do {
                let settings = try EntitlementSettings.load(path: path)
                settings.apply(to: &configuration)
                let unknown = settings.unknownMVPDs(known: Set(configuration.mvpds.map(\.id)))
                guard unknown.isEmpty else {
                    writeError("pass-sim: \(path): unknown MVPD \(unknown.joined(separator: ", "))")
                    throw ExitCode.failure
                }
            } catch let error as ExitCode {
                throw error
            } catch {
                writeError("pass-sim: cannot read \(path): \(error)")
                throw ExitCode.failure
            }
        }

        let simulator = PassSimulator(configuration: configuration, logger: logger)
        let host = self.listen.host
        let scheme = configuration.tls == nil ? "http" : "https"
        let application = simulator.makeApplication(host: host, port: self.listen.port) { port in
            let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            let authority = shownHost.contains(":") ? "[\(shownHost)]:\(port)" : "\(shownHost):\(port)"
            writeLine("pass-sim listening; activation page: \(scheme)://\(authority)/activate")
        }
        do {
            try await simulator.loadState()
        } catch {
            writeError("pass-sim: \(error.description)")
            throw ExitCode.failure
        }
        try await application.runService()
    }
}

/// `device+client` or `device`.
struct ProfileScopeOption: ExpressibleByArgument {
    let scope: V2ProfileScope

    init(_ scope: V2ProfileScope) {
        self.scope = scope
    }

    init?(argument: String) {
        guard let scope = V2ProfileScope(rawValue: argument) else { return nil }
        self.scope = scope
    }

    var defaultValueDescription: String { self.scope.rawValue }
    static var allValueStrings: [String] { V2ProfileScope.allCases.map(\.rawValue) }
}

/// `ip` or `device`.
struct ThrottleKeyOption: ExpressibleByArgument {
    let key: ThrottleKey

    init(_ key: ThrottleKey) {
        self.key = key
    }

    init?(argument: String) {
        guard let key = ThrottleKey(rawValue: argument) else { return nil }
        self.key = key
    }

    var defaultValueDescription: String { self.key.rawValue }

    static var allValueStrings: [String] { ThrottleKey.allCases.map(\.rawValue) }
}

/// `REQUESTOR=MVPD[,MVPD…]`.
struct Integration: ExpressibleByArgument {
    let requestor: String
    let mvpds: Set<String>

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        let mvpds = parts[1].split(separator: ",").map(String.init)
        guard !mvpds.isEmpty else { return nil }
        self.requestor = String(parts[0])
        self.mvpds = Set(mvpds)
    }
}

/// `SOFTWARE_ID` or `SOFTWARE_ID=REQUESTOR[,REQUESTOR…]`.
struct ApprovedStatement: ExpressibleByArgument {
    let softwareId: String
    let requestors: Set<String>

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { return nil }
        self.softwareId = String(parts[0])
        self.requestors = parts.count > 1 ? Set(parts[1].split(separator: ",").map(String.init)) : []
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

    /// Seconds (`2`, `2.5`) or any duration the project reads (`2s`, `500ms`, `30m`).
    init?(argument: String) {
        guard let milliseconds = DurationParser.milliseconds(argument) else { return nil }
        self.value = Double(milliseconds) / 1000
    }

    var duration: Duration { .milliseconds(Int64((self.value * 1000).rounded())) }

    var defaultValueDescription: String {
        self.value == self.value.rounded() ? String(Int64(self.value)) : String(self.value)
    }
}

/// A probability, 0…1.
struct Probability: ExpressibleByArgument {
    let value: Double

    init?(argument: String) {
        guard let value = Double(argument), (0...1).contains(value) else { return nil }
        self.value = value
    }
}

/// `MS` or `MS+SPREAD`, in milliseconds.
struct Latency: ExpressibleByArgument {
    let fixed: Int
    let spread: Int

    init?(argument: String) {
        let parts = argument.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
        guard let fixed = Int(parts[0]), fixed >= 0 else { return nil }
        let spread = parts.count > 1 ? Int(parts[1]) : 0
        guard let spread, spread >= 0 else { return nil }
        self.fixed = fixed
        self.spread = spread
    }
}

/// `PUBLIC:SECRET`; the secret is never printed.
struct SigningKey: ExpressibleByArgument {
    let publicKey: String
    let secret: String

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        let publicKey = String(argument[..<colon])
        let secret = String(argument[argument.index(after: colon)...])
        guard !publicKey.isEmpty, !secret.isEmpty else { return nil }
        self.publicKey = publicKey
        self.secret = secret
    }
}

/// `NAME` or `NAME=DETAILS`.
struct Denial: ExpressibleByArgument {
    let name: String
    let details: String

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { return nil }
        self.name = String(parts[0])
        self.details = parts.count > 1 ? String(parts[1]) : ""
    }
}

/// `approve[:SECONDS]`, `deny[:SECONDS]` or `never`.
struct Script: ExpressibleByArgument {
    let script: CodeScript

    init?(argument: String) {
        let parts = argument.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let outcome = CodeScript.Outcome(rawValue: String(parts[0])) else { return nil }
        var after: Double?
        if parts.count > 1 {
            guard outcome != .never, let seconds = Double(parts[1]), seconds.isFinite, seconds >= 0 else { return nil }
            after = seconds
        }
        self.script = CodeScript(outcome: outcome, after: after)
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
    writeText(text, to: 1)
}

/// Writes a line to stderr.
func writeError(_ text: String) {
    writeText(text, to: 2)
}

private func writeText(_ text: String, to descriptor: Int32) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
