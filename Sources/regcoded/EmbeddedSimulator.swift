import Logging
import PassSimulator
import RegcodeDaemon
import ServiceLifecycle

/// The Adobe Pass simulator the daemon runs in its own process when the configuration names no backend: it serves
/// the requestors the fleets use, trusts the statement it signs for them, knows their v1 key pairs and the TV
/// Provider's identity provider, and keeps its state (and, with `simulator.tls`, its CA) beside the database.
struct EmbeddedSimulator: EmbeddedBackend {
    let simulator: PassSimulator
    let host: String
    let port: Int
    let scheme: String
    let statementKey: any SoftwareStatementIssuer
    let caFile: String?

    /// The factory the daemon calls once it holds the database lock.
    static let factory: EmbeddedBackendFactory = { (context) throws(ConfigurationError) -> any EmbeddedBackend in
        try EmbeddedSimulator(context)
    }

    init(_ context: EmbeddedBackendContext) throws(ConfigurationError) {
        let configuration = context.configuration
        let key = try Self.statementKey(configuration)
        let tls = try Self.tls(configuration)
        var simulatorConfiguration = SimulatorConfiguration()
        simulatorConfiguration.autoApproveAfter = configuration.simulatorAutoApproveAfter
        // The in-process backend serves the requestors the fleets use (strict about any other).
        simulatorConfiguration.serviceProviders = Set(configuration.fleets.map(\.requestor)).union(["REF30"])
        // Beside the database, so a restarted daemon finds the same client, token and code.
        simulatorConfiguration.statePath = configuration.simulatorStatePath
        simulatorConfiguration.tls = tls?.server
        simulatorConfiguration.maxConnections = context.maxConnections
        simulatorConfiguration.idleTimeout = configuration.idleTimeout
        simulatorConfiguration.readTimeout = configuration.readTimeout
        // It trusts the TV Provider's identity provider for every Apple-mapped MVPD.
        simulatorConfiguration.samlTrust.defaultKeyPEM = context.tvProviderPublicKeyPEM
        simulatorConfiguration.statementKey = key.key
        // It must know the v1 key pairs the fleets sign with.
        simulatorConfiguration.signingKeys.merge(context.signingKeys) { _, fleet in fleet }
        // It logs every request it answers; that is noise next to a fleet unless the daemon itself runs at debug or trace.
        var logger = Logger(label: "regcoded.simulator")
        if configuration.logLevel > .debug { logger.logLevel = max(configuration.logLevel, .notice) }
        self.simulator = PassSimulator(configuration: simulatorConfiguration, logger: logger)
        self.host = configuration.simulatorHost
        self.port = configuration.simulatorPort
        self.scheme = configuration.simulatorTLS ? "https" : "http"
        self.statementKey = key
        self.caFile = tls?.caFile
    }

    func service(ready: @escaping @Sendable (String) -> Void) -> any Service {
        let (host, scheme) = (self.host, self.scheme)
        return simulator.makeApplication(host: host, port: port) { port in ready("\(scheme)://\(host):\(port)") }
    }

    func approve(code: String, mvpd: String?) throws(EmbeddedApprovalError) -> String {
        if SimulatorState.isOAuthUserCode(code) {
            // An OAuth device's user code: approved at the authorization server, which names no MVPD.
            let provider = simulator.configuration.oauth.provider.rawValue
            switch simulator.state.withLock({ $0.approveOAuthUserCode(code) }) {
            case .approved: return provider
            case .unknownCode: throw .unknownCode
            case .codeGone: throw .codeGone
            case .alreadyDecided: throw .alreadyCompleted(mvpd: provider)
            }
        }
        do {
            return try simulator.state.withLock { (state) throws(CodeCompletionError) in
                try state.completeCode(code, mvpd: mvpd, userId: nil, attributes: nil)
            }
            .mvpd
        } catch {
            switch error {
            case .unknownCode: throw .unknownCode
            case .codeGone: throw .codeGone
            case .unknownMVPD(let mvpd): throw .unknownMVPD(mvpd)
            case .alreadyCompleted(let profile): throw .alreadyCompleted(mvpd: profile.mvpd)
            }
        }
    }

    /// The statement key, kept beside the simulator's state so the statement stays valid across restarts.
    static func statementKey(_ configuration: DaemonConfiguration) throws(ConfigurationError) -> EmbeddedStatementKey {
        do {
            let path = SoftwareStatementKey.path(besideState: configuration.simulatorStatePath)
            return EmbeddedStatementKey(key: try SoftwareStatementKey.loadOrCreate(path: path).key)
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "database", reason: error.description)
        }
    }

    /// With `simulator.tls`: a CA kept beside the database issues a certificate for the simulator's listen address;
    /// the devices trust the CA.
    static func tls(_ configuration: DaemonConfiguration) throws(ConfigurationError) -> (server: SimulatorTLS, caFile: String)? {
        guard configuration.simulatorTLS else { return nil }
        let names = Array(Set([configuration.simulatorHost, "localhost", "127.0.0.1"]))
        do {
            let directory = try TestCertificateDirectory.prepare(configuration.simulatorTLSDirectory, serverNames: names)
            return (
                SimulatorTLS(certificateChainPath: directory.certificatePath, privateKeyPath: directory.privateKeyPath), directory.caCertificatePath
            )
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "simulator.tls", reason: "\(error)")
        }
    }
}

/// The embedded simulator's statement key as the daemon uses it: it signs statements for regcoded's `software_id`.
struct EmbeddedStatementKey: SoftwareStatementIssuer {
    let key: SoftwareStatementKey

    func issue(redirectURIs: [String]) -> String? {
        try? key.issue(softwareId: SimulatorConfiguration.embeddedSoftwareId, redirectURIs: redirectURIs, clientName: "regcoded")
    }
}
