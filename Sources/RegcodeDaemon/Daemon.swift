import AccessEnablerAPI
import AdobePassClient
import ControlHTTP
import ControlSocket
import DeviceFleet
import DeviceRegistry
import Foundation
import Hummingbird
import KeepAliveHTTP
import Logging
import NIOCore
import NIOPosix
import PassSimulator
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The assembled daemon: store, fleet, event pipeline, control socket and (when no backend is
/// configured) the in-process simulator, run as one swift-service-lifecycle `ServiceGroup`.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    /// The embedded simulator's software statement key (`nil` with another backend): the daemon issues its fleets'
    /// statement with it, as a programmer downloads one from the TVE Dashboard.
    private let embeddedStatementKey: SoftwareStatementKey?
    /// The fleets as last (re)loaded.
    var catalog: DeviceCatalog { registry.catalog }
    let environment: [String: String]
    let systemd: SystemdService
    private let reloadConfiguration: (@Sendable () throws -> DaemonConfiguration)?
    let store: RegcodeStore
    let broadcaster: EventBroadcaster<EventNotification>
    let pipeline: EventPipeline<ContinuousClock>
    let fleet: PartitionedFleet<SystemDeviceClock>
    let backend = DeferredBackend()
    /// What `daemon.status` and `STATUS=` say about the wire (TLS checks off, fleets failing their handshakes).
    let transportStatus: TransportStatus
    /// Every backend connection, by fleet connection model (`connections:`), over plain HTTP or TLS.
    let connectionPools: ConnectionPools
    let logger: Logger
    let startedAt = Date()
    let activationURL = SharedValue<String?>(nil)
    /// Set once every configured device exists: until then the socket answers "starting".
    var devicesUp: SharedValue<Bool> { registry.devicesUp }
    /// The device lifecycle: catalog, client addresses, added devices; the one place fleet and store change together.
    let registry: DeviceRegistry<SystemDeviceClock>
    private let simulator: PassSimulator?
    /// The in-process backend, when there is one (`simulator.approve` completes codes on it).
    var embeddedSimulator: PassSimulator? { simulator }
    /// Live per-fleet figures and each device's last outcome, for `fleets.stats`, `devices.list` and the console.
    let liveStats = LiveStats()
    /// The HTTP listener's bearer token, read at start-up; nil on loopback without one.
    let httpToken: String?
    let metrics: RegcodeMetrics?
    /// Signs the SAML answers of every emulated TV Provider (Apple single sign-on).
    let tvProviderIdentityProvider: TVProviderIdentityProvider

    /// Reads secrets and opens the database; nothing runs yet. Configuration errors surface
    /// before the database is touched.
    /// - Parameter reloadConfiguration: builds the configuration again (file + flags) on SIGHUP.
    public init(
        configuration: DaemonConfiguration,
        environment: [String: String],
        logger: Logger = Logger(label: "regcoded"),
        reloadConfiguration: (@Sendable () throws -> DaemonConfiguration)? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.environment = environment
        self.reloadConfiguration = reloadConfiguration
        var catalog = try DeviceCatalog.load(configuration: configuration, environment: environment)
        // The socket is bound only in run(); a path that cannot work must not leave a new database behind.
        if SocketActivation.controlDescriptor(environment: environment) == nil {
            try configuration.checkSocketPath()
        }
        self.httpToken = try Self.readHTTPToken(configuration)
        // Before the store opens: a second daemon on this file must not write a byte of it.
        try DatabaseLock.acquire(database: configuration.database)
        // Only now written (once) beside the database: a daemon refused above leaves nothing behind.
        self.embeddedStatementKey = try Self.embeddedStatementKey(configuration)
        if let embeddedStatementKey {
            let statement = Self.embeddedStatement(key: embeddedStatementKey, configuration: configuration)
            catalog.useEmbeddedStatement(statement)
        }
        do {
            // Checkpoints off the commit path: a commit that checkpoints delays its events (CheckpointService).
            self.store = try RegcodeStore(
                path: configuration.database,
                walCheckpoints: .background,
                pollIndex: configuration.pollIndex,
                logger: logger
            )
        } catch let error as RegcodeStoreError {
            // A file that is not ours, a newer schema or an unusable path: the operator's setting to fix.
            throw ConfigurationError(file: configuration.configFile, key: "database", reason: error.description)
        }
        // Before any device is reconciled: another slice would remove this one's devices.
        try Self.bindShard(store: store, configuration: configuration)
        let identityProvider = try TVProviderKeyFile.identityProvider(configuration, logger: logger)
        self.tvProviderIdentityProvider = identityProvider
        catalog.identityProvider = identityProvider
        self.broadcaster = EventBroadcaster(bufferSize: configuration.subscriberBuffer)
        let printCodes = configuration.printsCodes
        let activationURL = self.activationURL
        let liveStats = self.liveStats
        var observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void] = [{ steps, _ in liveStats.record(steps) }]
        if printCodes {
            let logins = PrintedLogins()
            observers.append { steps, _ in CodePrinter.print(steps, activationURL: activationURL.value, logins: logins) }
        }
        if configuration.metrics != nil {
            let metrics = RegcodeMetrics(shard: configuration.shard)
            self.metrics = metrics
            observers.append { steps, _ in metrics.record(steps) }
        } else {
            self.metrics = nil
        }
        self.pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: observers, clock: ContinuousClock(), logger: logger)
        let embeddedTLS = try Self.embeddedSimulatorTLS(configuration)
        let tls = try Self.tlsContext(configuration, embeddedCA: embeddedTLS?.caFile)
        // Each fleet partition and its plain-HTTP connections share one event loop (see `Fleet.init`).
        let fleetLoops = Self.fleetLoops(count: configuration.fleetLoops)
        let openFiles = OpenFileLimit.raiseToHardLimit()
        let connectionBudget = ConnectionBudget(
            limit: OpenFileLimit.connectionBudget(forLimit: openFiles.after, embeddedSimulator: configuration.usesEmbeddedSimulator)
        )
        self.connectionPools = ConnectionPools(
            commonConnections: max(8, configuration.maxConcurrentRequests),
            // A refused connection (or a silent TLS port) fails fast and backs off.
            connectTimeout: .seconds(3),
            loops: fleetLoops,
            connectionBudget: connectionBudget,
            tls: tls
        )
        Self.checkConnectionBudget(connectionBudget, openFiles: openFiles, configuration: configuration, logger: logger)
        let backend = self.backend
        self.fleet = PartitionedFleet(
            clock: SystemDeviceClock(),
            eventLoops: fleetLoops,
            makeExecutor: { _ in backend },
            sink: pipeline,
            maxConcurrentRequests: configuration.maxConcurrentRequests,
            timerSlack: configuration.timerSlack,
            logger: logger
        )
        self.registry = DeviceRegistry(
            catalog: catalog,
            shard: configuration.shard,
            fleet: fleet,
            store: store,
            barrier: pipeline,
            liveStats: liveStats,
            logger: logger
        )
        let transportStatus = TransportStatus(
            settings: configuration.tls,
            usesTLS: configuration.backendUsesTLS,
            liveStats: liveStats,
            sharedAddressWarning: configuration.sharedAddressWarning()
        )
        self.transportStatus = transportStatus
        if let warning = transportStatus.sharedAddressWarning {
            logger.warning("\(warning)", metadata: ["backend": "\(configuration.backend ?? "embedded simulator")"])
        }
        for warning in configuration.legacyAPIWarnings {
            logger.warning("\(warning)", metadata: ["backend": "\(configuration.backend ?? "")"])
        }
        if let warning = transportStatus.verifyWarning {
            logger.warning("\(warning): any certificate is accepted", metadata: ["backend": "\(configuration.backend ?? "")"])
        }
        self.systemd = SystemdService(
            notifier: SystemdNotifier(environment: environment),
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment),
            fleet: fleet,
            transportStatus: transportStatus.line,
            logger: logger
        )
        if configuration.usesEmbeddedSimulator {
            var simulatorConfiguration = SimulatorConfiguration()
            simulatorConfiguration.autoApproveAfter = configuration.simulatorAutoApproveAfter
            // The in-process backend serves the requestors the fleets use (strict about any other).
            simulatorConfiguration.serviceProviders = Set(configuration.fleets.map(\.requestor)).union(["REF30"])
            // Beside the database, so a restarted daemon finds the same client, token and code.
            simulatorConfiguration.statePath = configuration.simulatorStatePath
            simulatorConfiguration.tls = embeddedTLS?.server
            // The in-process backend trusts the TV Provider's identity provider for every Apple-mapped MVPD.
            simulatorConfiguration.samlTrust.defaultKeyPEM = identityProvider.publicKeyPEM
            if let embeddedStatementKey { simulatorConfiguration.statementKey = embeddedStatementKey }
            // The in-process backend must know the v1 key pairs the fleets sign with.
            for secrets in catalog.secrets.values {
                if let keys = secrets.signingKeys { simulatorConfiguration.signingKeys[keys.publicKey] = keys.secret }
            }
            // The embedded backend logs every request it answers; that is noise next to a fleet
            // unless the daemon itself runs at debug or trace.
            var simulatorLogger = Logger(label: "regcoded.simulator")
            if configuration.logLevel > .debug { simulatorLogger.logLevel = max(configuration.logLevel, .notice) }
            self.simulator = PassSimulator(configuration: simulatorConfiguration, logger: simulatorLogger)
        } else {
            self.simulator = nil
        }
    }

    /// The embedded simulator's statement key, kept beside its state so the statement stays valid across restarts;
    /// `nil` with another backend.
    static func embeddedStatementKey(_ configuration: DaemonConfiguration) throws(ConfigurationError) -> SoftwareStatementKey? {
        guard configuration.usesEmbeddedSimulator else { return nil }
        do {
            return try SoftwareStatementKey.loadOrCreate(path: SoftwareStatementKey.path(besideState: configuration.simulatorStatePath)).key
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "database", reason: error.description)
        }
    }

    /// The statement of fleets that name none: issued with the embedded simulator's key for regcoded's `software_id`
    /// and every fleet's `redirect_uri`; the unsigned placeholder with another backend (which must be given one, or
    /// accept unsigned statements).
    static func embeddedStatement(key: SoftwareStatementKey?, configuration: DaemonConfiguration) -> String {
        guard let key else { return DeviceCatalog.embeddedSoftwareStatement }
        let redirectURIs = Set(configuration.fleets.map(\.identity.clientRedirectURI) + [ClientIdentity().clientRedirectURI]).sorted()
        return (try? key.issue(softwareId: SimulatorConfiguration.embeddedSoftwareId, redirectURIs: redirectURIs, clientName: "regcoded"))
            ?? DeviceCatalog.embeddedSoftwareStatement
    }

    /// Runs until SIGTERM or SIGINT, then stops gracefully: the socket closes, devices stop,
    /// calls in flight finish, the last steps are stored.
    public func run() async throws {
        let ready = AsyncStream<String>.makeStream()
        // First: the watch outlives the pipeline (it must release a held fleet until the last
        // steps are stored), and the pipeline outlives every producer of steps.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: StorageWatchService(pipeline: pipeline, fleet: fleet, systemd: systemd, logger: logger)),
            .init(service: pipeline),
        ]
        if let simulator {
            let host = configuration.simulatorHost
            let scheme = configuration.simulatorTLS ? "https" : "http"
            let app = simulator.makeApplication(host: host, port: configuration.simulatorPort) { port in
                ready.continuation.yield("\(scheme)://\(host):\(port)")
                ready.continuation.finish()
            }
            services.append(.init(service: app))
        } else if let backend = configuration.backend {
            ready.continuation.yield(backend)
            ready.continuation.finish()
        }
        services.append(.init(service: fleet))
        let handler = DaemonControlHandler(daemon: self)
        let listener: ControlServer.Listener
        if let fd = SocketActivation.controlDescriptor(environment: environment) {
            SocketActivation.clearEnvironment()
            listener = .fileDescriptor(fd)
            logger.info("serving the socket systemd passed", metadata: ["fd": "\(fd)"])
        } else {
            listener = .path(configuration.socket)
        }
        var serverConfiguration = ControlServer.Configuration(listener: listener)
        if let groupName = configuration.socketGroup {
            guard let gid = ControlServer.groupID(named: groupName) else {
                throw ConfigurationError(file: configuration.configFile, key: "socket_group", reason: "no group named '\(groupName)'")
            }
            serverConfiguration.group = gid
        }
        let systemd = self.systemd
        let server = ControlServer(configuration: serverConfiguration, handler: handler, logger: logger) {
            await systemd.reached(.socketListening)
        }
        services.append(.init(service: server))
        liveStats.setFleetResolver { [weak registry] device in registry?.fleetName(of: device) }
        if let http = configuration.http, let address = HostPort.parse(http) {
            var httpConfiguration = HTTPControlServer.Configuration(host: address.host, port: address.port, token: httpToken)
            httpConfiguration.inputLimits = serverConfiguration.inputLimits
            let logger = self.logger
            var exposition: (@Sendable () -> String)?
            if let metrics = self.metrics {
                exposition = { metrics.exposition() }
            }
            let onListening: @Sendable (Int) async -> Void = { port in
                let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                let url = "http://\(host):\(port)/"
                logger.notice("console and HTTP API listening", metadata: ["http.url": "\(url)"])
                // Like the activation page: the address a person (or a test, with port 0) needs to know.
                CodePrinter.say("console: \(url)")
            }
            let httpServer = HTTPControlServer(
                configuration: httpConfiguration,
                handler: handler,
                metrics: exposition,
                logger: logger,
                onListening: onListening
            )
            services.append(.init(service: httpServer))
        }
        services.append(.init(service: Starter(daemon: self, backendURLs: ready.stream)))
        services.append(.init(service: RetentionService(store: store, retention: configuration.retention, logger: logger)))
        services.append(.init(service: CheckpointService(store: store, logger: logger)))
        services.append(.init(service: ReloadService(daemon: self)))
        if let metrics, let address = configuration.metrics.flatMap(HostPort.parse) {
            services.append(
                .init(
                    service: MetricsService(
                        metrics: metrics,
                        address: address,
                        fleet: fleet,
                        broadcaster: broadcaster,
                        pipeline: pipeline,
                        transport: connectionPools.statistics,
                        logger: logger
                    )
                )
            )
        }
        // Last: shut down first, so STOPPING=1 goes out before anything else stops.
        services.append(.init(service: systemd))

        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        do {
            try await group.run()
        } catch {
            connectionPools.shutdown()
            throw error
        }
        connectionPools.shutdown()
    }

    /// Binds the backend and brings every stored and configured device up.
    func start(backendURL: String) async throws {
        var clientConfiguration = AdobePassClientConfiguration(baseURL: backendURL)
        clientConfiguration.requestTimeout = .seconds(30)
        backend.bind(AdobePassClient(configuration: clientConfiguration, connectionPools: connectionPools, logger: logger))
        if simulator != nil {
            let url = "\(backendURL)/activate"
            activationURL.value = url
            CodePrinter.say("activation page: \(url)")
        }
        let startClock = ContinuousClock()
        let startedAt = startClock.now
        let report: StartReport
        do {
            report = try await registry.start(nowEpochMs: configuration.printsCodes ? Int64(Date().timeIntervalSince1970 * 1000) : nil)
        } catch .noFreeAddress(let device, let range) {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "client_address.addresses",
                reason: "\(range) has no free address left for \(device)"
            )
        }
        logger.debug(
            "devices added to the fleet",
            metadata: ["devices": "\(report.started)", "elapsed": "\(startedAt.duration(to: startClock.now))"]
        )
        for resumed in report.resumedCodes {
            CodePrinter.printResumed(device: resumed.device, code: resumed.code, activationURL: activationURL.value)
        }
        await systemd.reached(.devicesResumed)
        logger.info(
            "regcoded ready",
            metadata: [
                "devices": "\(report.started)", "ramping": "\(report.ramping)", "socket": "\(configuration.socket)",
                "database": "\(configuration.database)", "backend": "\(backendURL)",
                "shard": "\(configuration.shard?.description ?? "none")",
            ]
        )
        await registry.ramp()
    }

    /// The fleet a device belongs to: by its name for configured devices, as recorded for devices added over the socket.
    func fleetName(of device: String) -> String? {
        registry.fleetName(of: device)
    }

    /// `count` of NIO's shared loops (nil: all of them, one per core); more than there are repeat loops, which
    /// splits the devices without adding a thread.
    static func fleetLoops(count: Int?) -> [any EventLoop] {
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        return (0..<(count ?? loops.count)).map { loops[$0 % loops.count] }
    }

    /// The embedded simulator's certificate and the CA file the devices trust, with `simulator.tls`.
    struct EmbeddedSimulatorTLS: Sendable {
        let server: SimulatorTLS
        let caFile: String
    }

    /// With `simulator.tls`: a CA kept beside the database issues a certificate for the simulator's listen address.
    static func embeddedSimulatorTLS(_ configuration: DaemonConfiguration) throws(ConfigurationError) -> EmbeddedSimulatorTLS? {
        guard configuration.usesEmbeddedSimulator, configuration.simulatorTLS else { return nil }
        let names = Array(Set([configuration.simulatorHost, "localhost", "127.0.0.1"]))
        do {
            let directory = try TestCertificateDirectory.prepare(configuration.simulatorTLSDirectory, serverNames: names)
            return EmbeddedSimulatorTLS(
                server: SimulatorTLS(certificateChainPath: directory.certificatePath, privateKeyPath: directory.privateKeyPath),
                caFile: directory.caCertificatePath
            )
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "simulator.tls", reason: "\(error)")
        }
    }

    /// The TLS context every `https://` backend connection uses, with its files read now: a bad `tls.*` setting stops
    /// the start before the database is touched. nil with a plain-HTTP backend.
    static func tlsContext(_ configuration: DaemonConfiguration, embeddedCA: String?) throws(ConfigurationError) -> TLSClientContext? {
        guard configuration.backendUsesTLS else { return nil }
        var settings = configuration.tls
        // The embedded simulator's own CA, unless the operator named one.
        if settings.caFile == nil, let embeddedCA { settings.caFile = embeddedCA }
        do {
            return try TLSClientContext(settings: settings)
        } catch {
            throw ConfigurationError(file: configuration.configFile, key: "tls", reason: error.description)
        }
    }

    /// The HTTP bearer token from `http_token_file` (or the `http-token` credential): one line, surrounding white space ignored.
    static func readHTTPToken(_ configuration: DaemonConfiguration) throws -> String? {
        guard configuration.http != nil, let path = configuration.httpTokenFile else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "http_token_file",
                reason: "cannot read \(path): \(error.localizedDescription)"
            )
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "http_token_file",
                reason: "\(path) must hold one token of at least 16 characters without spaces (e.g. from `openssl rand -hex 32`)"
            )
        }
        return token
    }

    /// SIGHUP: reads the configuration again and applies the fleet changes: devices added,
    /// removed or changed without disturbing the others. A bad configuration is reported (log
    /// and `STATUS=`) and the running one kept.
    func reload() async {
        guard let reloadConfiguration else {
            logger.notice("SIGHUP ignored: no configuration file to reload")
            return
        }
        var newCatalog: DeviceCatalog
        do {
            let configuration = try reloadConfiguration()
            try configuration.validate()
            newCatalog = try DeviceCatalog.load(configuration: configuration, environment: environment)
            newCatalog.identityProvider = tvProviderIdentityProvider
            newCatalog = try DeviceCatalog.load(
                configuration: configuration,
                environment: environment,
                embeddedStatement: Self.embeddedStatement(key: embeddedStatementKey, configuration: configuration)
            )
            for (key, old, new) in [
                ("database", self.configuration.database, configuration.database),
                ("socket", self.configuration.socket, configuration.socket),
                ("backend", self.configuration.backend ?? "", configuration.backend ?? ""),
                ("shard", self.configuration.shard?.description ?? "", configuration.shard?.description ?? ""),
            ] where old != new {
                logger.warning("changing '\(key)' needs a restart; keeping the running value", metadata: ["key": "\(key)"])
            }
        } catch {
            logger.error("reload failed; keeping the running configuration", metadata: ["error": "\(error)"])
            systemd.setStatusOverride("reload failed: \(error)")
            return
        }
        let report = await registry.reload(catalog: newCatalog)
        if let failure = report.failure {
            logger.error("reload partly applied", metadata: ["error": "\(failure)"])
            systemd.setStatusOverride("reload partly applied: \(failure)")
            return
        }
        systemd.setStatusOverride(nil)
        logger.info(
            "configuration reloaded",
            metadata: ["added": "\(report.added)", "removed": "\(report.removed)", "changed": "\(report.changed)"]
        )
    }

}
