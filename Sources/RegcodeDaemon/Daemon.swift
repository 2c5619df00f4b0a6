import AccessEnablerAPI
import AdobePassClient
import BackendHTTP
import ControlHTTP
import ControlRPC
import DeviceEvents
import DeviceFleet
import DeviceRegistry
import Foundation
import ListenerGuard
import Logging
import NIOCore
import NIOPosix
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The assembled daemon: store, fleet, event pipeline, control socket and (when no backend is
/// configured) the in-process simulator, run as one swift-service-lifecycle `ServiceGroup`.
package final class Daemon: Sendable {
    package let configuration: DaemonConfiguration
    /// The embedded backend's statement key (`nil` with another backend): the daemon issues its fleets' statement
    /// with it, as a programmer downloads one from the TVE Dashboard.
    private let embeddedStatementKey: (any SoftwareStatementIssuer)?
    /// The fleets as last (re)loaded.
    var catalog: DeviceCatalog { registry.catalog }
    let environment: [String: String]
    let systemd: SystemdService
    private let reloadConfiguration: (@Sendable () throws -> DaemonConfiguration)?
    let store: RegcodeStore
    let broadcaster: EventBroadcaster<EventNotification>
    let pipeline: EventPipeline<ContinuousClock>
    let fleet: PartitionedFleet
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
    let registry: DeviceRegistry
    /// The in-process backend (the executable's simulator), when the configuration names no other: `simulator.approve`
    /// completes codes on it.
    let simulator: (any EmbeddedBackend)?
    /// Live per-fleet figures and each device's last outcome, for `fleets.stats`, `devices.list` and the console.
    let liveStats = LiveStats()
    /// Whether the emulator keeps its own schedule (``GeneratorHealthService`` samples it).
    let generatorHealth = GeneratorHealth()
    /// The HTTP listener's bearer token, read or generated at start-up; nil without `http` or with `http_auth: none`.
    let httpToken: HTTPToken?
    let metrics: RegcodeMetrics?
    /// The HTTP listener's event streams, capped and counted (nil without `http`).
    let eventStreams: OpenStreams?
    /// How the open-file limit (raised to its hard limit at start) is shared between the listeners, the fleet's
    /// connections and the database.
    let descriptorBudget: DescriptorBudget
    /// The running listeners' caps and counts, for `daemon.status` and the metrics.
    let listeners = SharedValue<[ListenerCounters]>([])
    /// Signs the SAML answers of every emulated TV Provider (Apple single sign-on).
    let tvProviderIdentityProvider: TVProviderIdentityProvider

    /// Reads secrets and opens the database; nothing runs yet. Configuration errors surface
    /// before the database is touched.
    /// - Parameters:
    ///   - reloadConfiguration: builds the configuration again (file + flags) on SIGHUP.
    ///   - embeddedBackend: builds the in-process backend a configuration without `backend` runs against.
    package init(
        configuration: DaemonConfiguration,
        environment: [String: String],
        logger: Logger = Logger(label: "regcoded"),
        reloadConfiguration: (@Sendable () throws -> DaemonConfiguration)? = nil,
        embeddedBackend: EmbeddedBackendFactory? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.environment = environment
        self.reloadConfiguration = reloadConfiguration
        var catalog = try DeviceCatalog.load(configuration: configuration, environment: environment)
        try Self.checkBeforeAnyFile(configuration, environment: environment)
        let token = try Self.httpToken(configuration)
        self.httpToken = token
        Self.warnAboutHTTPAuth(configuration, logger: logger)
        // Before the store opens: a second daemon on this file must not write a byte of it.
        try DatabaseLock.acquire(database: configuration.database)
        self.store = try Self.openStore(configuration, logger: logger)
        let identityProvider = try TVProviderKeyFile.identityProvider(configuration, logger: logger)
        self.tvProviderIdentityProvider = identityProvider
        catalog.identityProvider = identityProvider
        // Only now built (its key and certificates are written beside the database): a refused daemon leaves none.
        let simulator = try Self.embeddedBackend(
            embeddedBackend,
            configuration: configuration,
            catalog: catalog,
            identityProvider: identityProvider
        )
        self.simulator = simulator
        self.embeddedStatementKey = simulator?.statementKey
        if let simulator {
            let statement = Self.embeddedStatement(key: simulator.statementKey, configuration: configuration)
            catalog.useEmbeddedStatement(statement)
        }
        self.broadcaster = EventBroadcaster(bufferSize: configuration.subscriberBuffer)
        let (observers, metrics) = Self.stepObservers(
            configuration,
            activationURL: activationURL,
            liveStats: liveStats,
            hint: simulator == nil ? UnsignedStatementHint(catalog: catalog, logger: logger) : nil
        )
        self.metrics = metrics
        self.pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: observers, clock: ContinuousClock(), logger: logger)
        // Each fleet partition and its plain-HTTP connections share one event loop (see `Fleet.init`).
        let fleetLoops = Self.fleetLoops(count: configuration.fleetLoops)
        self.connectionPools = try Self.makeConnectionPools(configuration, loops: fleetLoops, embeddedCA: simulator?.caFile, logger: logger)
        let descriptorBudget = DescriptorBudget(limit: OpenFileLimit.raised.after, configuration: configuration)
        self.descriptorBudget = descriptorBudget
        self.eventStreams = Self.eventStreams(configuration, budget: descriptorBudget, logger: logger)
        let backend = self.backend
        self.fleet = PartitionedFleet(
            clock: .system,
            eventLoops: fleetLoops,
            makeExecutor: { _ in backend },
            sink: pipeline,
            maxConcurrentRequests: configuration.maxConcurrentRequests,
            timerSlack: configuration.timerSlack,
            writeAhead: configuration.writeAhead,
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
        self.transportStatus = TransportStatus(
            settings: configuration.tls,
            usesTLS: configuration.backendUsesTLS,
            liveStats: liveStats,
            sharedAddressWarning: configuration.sharedAddressWarning()
        )
        Self.warnAboutTheBackend(transportStatus, configuration: configuration, logger: logger)
        self.systemd = SystemdService(
            notifier: SystemdNotifier(environment: environment),
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment),
            fleet: fleet,
            transportStatus: transportStatus.line,
            logger: logger
        )
    }

    /// The longest a graceful stop may take: longer than the longest legitimate one (calls in flight end within the
    /// 30 s request timeout, a failing database is retried for 60 s). A stop still running then is cut short, the
    /// services left are cancelled and the daemon exits as after a kill, which loses nothing unseen (each backend
    /// request is stored before it is sent), instead of hanging until systemd's own timeout or for ever.
    static let maximumStopDuration: Duration = .seconds(120)

    /// Runs until SIGTERM or SIGINT, then stops gracefully: the socket closes, devices stop,
    /// calls in flight finish, the last steps are stored.
    package func run() async throws {
        let ready = AsyncStream<String>.makeStream()
        // First: the watch outlives the pipeline (it must release a held fleet until the last
        // steps are stored), and the pipeline outlives every producer of steps.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: StorageWatchService(pipeline: pipeline, fleet: fleet, systemd: systemd, logger: logger)),
            .init(service: pipeline),
        ]
        if let simulator {
            let service = simulator.service { url in
                ready.continuation.yield(url)
                ready.continuation.finish()
            }
            services.append(.init(service: service))
        } else if let backend = configuration.backend {
            ready.continuation.yield(backend)
            ready.continuation.finish()
        }
        // Between the two: the fleet's connections close after it stops and before the embedded simulator does.
        services.append(.init(service: BackendConnectionsService(pools: connectionPools)))
        services.append(.init(service: fleet))
        // One handler, one method table, over the socket and HTTP alike.
        services += try controlListeners(handler: ControlMethodsHandler(context: controlContext))
        liveStats.setFleetResolver { [weak registry] device in registry?.fleetName(of: device) }
        services.append(.init(service: Starter(backendURLs: ready.stream) { [self] url in try await start(backendURL: url) }))
        services.append(.init(service: RetentionService(store: store, retention: configuration.retention, logger: logger)))
        services.append(.init(service: CheckpointService(store: store, logger: logger)))
        services.append(.init(service: ReloadService { [self] in await reload() }))
        if TerminalOutput.wantsStatusLine(environment: environment) {
            services.append(.init(service: ProgressService(output: CodePrinter.output, fleet: fleet, liveStats: liveStats, startedAt: startedAt)))
        }
        services.append(
            .init(
                service: GeneratorHealthService(health: generatorHealth, liveStats: liveStats, fleet: fleet, pipeline: pipeline, logger: logger)
            )
        )
        if let metrics, let address = configuration.metrics.flatMap(HostPort.parse) {
            let listenerGuard = ListenerGuard(name: "metrics", limits: listenerLimits(maxConnections: descriptorBudget.metrics), logger: logger)
            listeners.value.append(listenerGuard.counters)
            services.append(
                .init(
                    service: MetricsService(
                        metrics: metrics,
                        address: address,
                        fleet: fleet,
                        broadcaster: broadcaster,
                        eventStreams: eventStreams,
                        pipeline: pipeline,
                        transport: connectionPools.statistics,
                        generatorHealth: generatorHealth,
                        listeners: listeners,
                        listenerGuard: listenerGuard,
                        logger: logger
                    )
                )
            )
        }
        if let length = configuration.runLength {
            services.append(
                .init(service: RunLengthService(length: length, logger: logger), successTerminationBehavior: .gracefullyShutdownGroup)
            )
        }
        // Last: shut down first, so STOPPING=1 goes out before anything else stops.
        services.append(.init(service: systemd))

        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = Self.maximumStopDuration
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch {
            connectionPools.shutdown()
            removeGeneratedHTTPToken()
            throw error
        }
        connectionPools.shutdown()
        removeGeneratedHTTPToken()
        // The last line of a graceful stop: what comes after it (a timed run's report) is not the stop.
        logger.notice("regcoded stopped: every service has ended and the last steps are stored")
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
            if configuration.hasOAuthDeviceFleets {
                // Where a person enters an OAuth device's user code (RFC 8628 `verification_uri`).
                CodePrinter.say("device verification page: \(backendURL)/device")
            }
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
        printResumed(report)
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

    /// What the devices resume, for the operator's terminal: codes still valid (each with the page to enter it at), and
    /// OAuth grants (an SDK device says so with its first callback; an OAuth device holding tokens makes no call).
    private func printResumed(_ report: StartReport) {
        for resumed in report.resumedCodes {
            CodePrinter.printResumed(device: resumed.device, code: resumed.code, activationURL: resumed.verificationURI ?? activationURL.value)
        }
        for device in report.resumedGrants {
            CodePrinter.say("\(device): authenticated (resumed)")
        }
    }

    /// The fleet a device belongs to: by its name for configured devices, as recorded for devices added over the socket.
    func fleetName(of device: String) -> String? {
        registry.fleetName(of: device)
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
            newCatalog = try DeviceCatalog.load(
                configuration: configuration,
                environment: environment,
                embeddedStatement: Self.embeddedStatement(key: embeddedStatementKey, configuration: configuration)
            )
            // Set on the catalog the reload applies: devices it restarts, and devices added after it, answer the TV
            // Provider's SAML request with it.
            newCatalog.identityProvider = tvProviderIdentityProvider
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
