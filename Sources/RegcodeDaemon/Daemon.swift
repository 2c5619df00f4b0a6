import AccessEnablerAPI
import AdobePassClient
import ControlHTTP
import ControlSocket
import DeviceFleet
import Foundation
import KeepAliveHTTP
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
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    private let catalogState: Mutex<DeviceCatalog>
    /// The embedded backend's statement key (`nil` with another backend): the daemon issues its fleets' statement
    /// with it, as a programmer downloads one from the TVE Dashboard.
    private let embeddedStatementKey: (any SoftwareStatementIssuer)?
    /// The fleets as last (re)loaded.
    var catalog: DeviceCatalog { catalogState.withLock { $0 } }
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
    let devicesUp = SharedValue(false)
    /// The in-process backend (the executable's simulator), when the configuration names no other: `simulator.approve`
    /// completes codes on it.
    let simulator: (any EmbeddedBackend)?
    /// Live per-fleet figures and each device's last outcome, for `fleets.stats`, `devices.list` and the console.
    let liveStats = LiveStats()
    /// The fleet of devices added over the socket (configured devices' fleets follow from their names).
    let addedDeviceFleets = Mutex<[String: String]>([:])
    /// The HTTP listener's bearer token, read at start-up; nil on loopback without one.
    let httpToken: String?
    /// The devices' client addresses (`bind`, `forwarded-for`); stored devices' addresses are reserved at start-up.
    let addressPools: Mutex<ClientAddressPools>
    let metrics: RegcodeMetrics?
    /// Signs the SAML answers of every emulated TV Provider (Apple single sign-on).
    let tvProviderIdentityProvider: TVProviderIdentityProvider

    /// Reads secrets and opens the database; nothing runs yet. Configuration errors surface
    /// before the database is touched.
    /// - Parameters:
    ///   - reloadConfiguration: builds the configuration again (file + flags) on SIGHUP.
    ///   - embeddedBackend: builds the in-process backend a configuration without `backend` runs against.
    public init(
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
        self.catalogState = Mutex(try DeviceCatalog.load(configuration: configuration, environment: environment))
        var pools = ClientAddressPools(shard: configuration.shard)
        pools.configure(catalogState.withLock { $0 })
        self.addressPools = Mutex(pools)
        // The socket is bound only in run(); a path that cannot work must not leave a new database behind.
        if SocketActivation.controlDescriptor(environment: environment) == nil {
            try configuration.checkSocketPath()
        }
        self.httpToken = try Self.readHTTPToken(configuration)
        // Before the store opens: a second daemon on this file must not write a byte of it.
        try DatabaseLock.acquire(database: configuration.database)
        self.store = try Self.openStore(configuration, logger: logger)
        let identityProvider = try TVProviderKeyFile.identityProvider(configuration, logger: logger)
        self.tvProviderIdentityProvider = identityProvider
        catalogState.withLock { $0.identityProvider = identityProvider }
        // Only now built (its key and certificates are written beside the database): a refused daemon leaves none.
        let simulator = try Self.embeddedBackend(
            embeddedBackend,
            configuration: configuration,
            catalog: catalogState.withLock { $0 },
            identityProvider: identityProvider
        )
        self.simulator = simulator
        self.embeddedStatementKey = simulator?.statementKey
        if let simulator {
            let statement = Self.embeddedStatement(key: simulator.statementKey, configuration: configuration)
            catalogState.withLock { $0.useEmbeddedStatement(statement) }
        }
        self.broadcaster = EventBroadcaster(bufferSize: configuration.subscriberBuffer)
        let (observers, metrics) = Self.stepObservers(configuration, activationURL: activationURL, liveStats: liveStats)
        self.metrics = metrics
        self.pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: observers, clock: ContinuousClock(), logger: logger)
        // Each fleet partition and its plain-HTTP connections share one event loop (see `Fleet.init`).
        let fleetLoops = Self.fleetLoops(count: configuration.fleetLoops)
        self.connectionPools = try Self.makeConnectionPools(configuration, loops: fleetLoops, embeddedCA: simulator?.caFile, logger: logger)
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
            let service = simulator.service { url in
                ready.continuation.yield(url)
                ready.continuation.finish()
            }
            services.append(.init(service: service))
        } else if let backend = configuration.backend {
            ready.continuation.yield(backend)
            ready.continuation.finish()
        }
        services.append(.init(service: fleet))
        // One handler, one method table, over the socket and HTTP alike.
        services += try controlListeners(handler: DaemonControlHandler(daemon: self))
        liveStats.setFleetResolver { [weak self] device in self?.fleetName(of: device) }
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
        let specs = try await reconcileDevices()
        logger.debug("devices reconciled", metadata: ["devices": "\(specs.count)", "elapsed": "\(startedAt.duration(to: startClock.now))"])
        if configuration.printsCodes {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for spec in specs {
                if let code = spec.snapshot.code, code.expiresEpochMs > now {
                    CodePrinter.printResumed(device: spec.settings.name, code: code, activationURL: activationURL.value)
                }
            }
        }
        var ramps: [String: (ramp: Duration, specs: [Fleet<SystemDeviceClock>.DeviceSpec])] = [:]
        var now = specs
        // A device resuming a pending code is not held back: its code is already ticking. Only when some device is
        // held back is `now` rebuilt: a spec is ~1.3 KB, and copying 50,000 of them delayed READY=1.
        let rampOf = { (spec: Fleet<SystemDeviceClock>.DeviceSpec) -> (fleet: String, ramp: Duration)? in
            guard spec.snapshot.code == nil, let fleet = self.catalog.fleet(forDevice: spec.settings.name), let ramp = fleet.ramp,
                ramp > .zero
            else { return nil }
            return (fleet.name, ramp)
        }
        if specs.contains(where: { rampOf($0) != nil }) {
            now = []
            for spec in specs {
                if let (fleet, ramp) = rampOf(spec) {
                    ramps[fleet, default: (ramp, [])].specs.append(spec)
                } else {
                    now.append(spec)
                }
            }
        }
        try await fleet.add(contentsOf: now)
        logger.debug("devices added to the fleet", metadata: ["devices": "\(now.count)", "elapsed": "\(startedAt.duration(to: startClock.now))"])
        let started = now.count
        devicesUp.value = true
        await systemd.reached(.devicesResumed)
        logger.info(
            "regcoded ready",
            metadata: [
                "devices": "\(started)", "ramping": "\(specs.count - started)", "socket": "\(configuration.socket)",
                "database": "\(configuration.database)", "backend": "\(backendURL)",
                "shard": "\(configuration.shard?.description ?? "none")",
            ]
        )
        // Ramps start their devices evenly over their duration, fleets side by side.
        await withDiscardingTaskGroup { group in
            for (name, plan) in ramps {
                group.addTask {
                    let step = plan.ramp / max(1, plan.specs.count)
                    self.logger.info("ramping up", metadata: ["fleet": "\(name)", "devices": "\(plan.specs.count)", "over": "\(plan.ramp)"])
                    for spec in plan.specs {
                        do {
                            try await self.fleet.add(spec)
                            try await cancelWhenGracefulShutdown { try await Task.sleep(for: step) }
                        } catch {
                            return
                        }
                    }
                }
            }
        }
    }

    /// The fleet a device belongs to: by its name for configured devices, as recorded for devices added over the socket.
    func fleetName(of device: String) -> String? {
        catalog.fleet(forDevice: device)?.name ?? addedDeviceFleets.withLock { $0[device] }
    }

    /// The devices the configuration lists that this process runs: its shard's (the shard it
    /// started with: a reload keeps the slice).
    func wantedDevices(_ catalog: DeviceCatalog) -> [WantedDevice] {
        Array(self.wantedDeviceSequence(catalog))
    }

    /// The wanted devices one at a time, so start-up does not hold them all at once.
    func wantedDeviceSequence(_ catalog: DeviceCatalog) -> some Sequence<WantedDevice> {
        catalog.fleets.lazy.flatMap { fleet in
            fleet.deviceNames(in: self.configuration.shard).lazy.map { name in
                WantedDevice(
                    name: name,
                    settings: catalog.settings(for: name, fleet: fleet),
                    scenario: fleet.scenario,
                    fleet: fleet.name,
                    cycle: fleet.cycle
                )
            }
        }
    }

    /// Start-up: what to start for every configured and stored device (stored identity, state and
    /// seed are kept; devices no longer configured are forgotten unless added over the socket).
    func reconcileDevices() async throws -> [Fleet<SystemDeviceClock>.DeviceSpec] {
        let clock = ContinuousClock()
        let loadStart = clock.now
        let stored = try await store.loadDevices()
        logger.debug("stored devices loaded", metadata: ["devices": "\(stored.count)", "elapsed": "\(loadStart.duration(to: clock.now))"])
        addressPools.withLock { $0.reserve(stored.compactMap(\.clientAddress)) }
        addedDeviceFleets.withLock { fleets in
            for device in stored where device.addedAtRuntime { fleets[device.name] = device.fleet }
        }
        var specs: [Fleet<SystemDeviceClock>.DeviceSpec] = []
        specs.reserveCapacity(stored.count)
        // Written together in one transaction: a commit per device made a first start with 50,000 devices slow.
        var toSave: [StoredDevice] = []
        var removed: [String] = []
        try DeviceReconciler().plan(
            wanted: wantedDeviceSequence(catalog),
            stored: stored,
            running: [:],
            runtimeSettings: runtimeSettingsAndCycle
        ) { plan in
            switch plan {
            case .start(let planned, let settings, let cycle, let save):
                let device = try addressed(planned)
                // Only a new device or a newly given address is written: rewriting every stored device made a
                // restart with 10,000 devices take seconds.
                if save || device.clientAddress != planned.clientAddress { toSave.append(device) }
                specs.append(device.spec(settings: settings, cycle: cycle))
            case .restart(let device, let settings, let cycle):
                let device = try addressed(device)
                toSave.append(device)
                specs.append(device.spec(settings: settings, cycle: cycle))
            case .keep:
                break
            case .remove(let name):
                removed.append(name)
            }
        }
        for name in removed {
            _ = try await store.removeDevice(named: name)
            logger.info("device no longer configured; removed", metadata: ["device": "\(name)"])
        }
        try await store.saveDevices(toSave)
        return specs
    }

    /// `device` with its client address when its fleet's mode uses one (`bind`, `forwarded-for`): its stored one when
    /// it is of the fleet's addresses, else (a configured device) the one at its ordinal among the devices sharing
    /// those addresses, else the next free one. A `host` device keeps what it has: nothing reads it.
    func addressed(_ device: StoredDevice) throws -> StoredDevice {
        let catalog = self.catalog
        let fleet = catalog.fleet(forDevice: device.name) ?? device.fleet.flatMap { catalog.fleet(named: $0) }
        guard let range = fleet?.clientAddress.addresses else { return device }
        if let address = device.clientAddress, addressPools.withLock({ $0.contains(address, range: range) }) { return device }
        var device = device
        let ordinal = device.addedAtRuntime ? nil : catalog.ordinal(ofDevice: device.name) { $0.clientAddress.addresses == range }
        guard let address = addressPools.withLock({ $0.take(range: range, ordinal: ordinal) }) else {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "client_address.addresses",
                reason: "\(range) has no free address left for \(device.name)"
            )
        }
        device.clientAddress = address
        return device
    }

    func runtimeSettingsAndCycle(_ device: StoredDevice) -> (DeviceSettings, CyclePlan?) {
        let template = device.fleet.flatMap { catalog.fleet(named: $0) } ?? catalog.fleets.first
        return (runtimeSettings(for: device), template?.cycle)
    }

    /// Stored settings of a device added over the socket, with its fleet's secrets restored.
    func runtimeSettings(for device: StoredDevice) -> DeviceSettings {
        var settings = device.settings
        let fleet = device.fleet.flatMap { catalog.fleet(named: $0) } ?? catalog.fleets.first
        let secrets = fleet.flatMap { catalog.secrets[$0.name] } ?? FleetSecrets(softwareStatement: catalog.embeddedStatement)
        settings.softwareStatement = secrets.softwareStatement
        settings.signingKeys = secrets.signingKeys
        return settings
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
        catalogState.withLock { $0 = newCatalog }
        addressPools.withLock { $0.configure(newCatalog) }
        var added = 0
        var removed = 0
        var changed = 0
        do {
            var running: [String: (settings: DeviceSettings, snapshot: DeviceSnapshot)] = [:]
            for name in await fleet.deviceNames {
                if let settings = await fleet.settings(of: name), let snapshot = await fleet.snapshot(of: name) {
                    running[name] = (settings, snapshot)
                }
            }
            let plans = DeviceReconciler().plan(
                wanted: wantedDevices(newCatalog),
                stored: try await store.loadDevices(),
                running: running,
                runtimeSettings: runtimeSettingsAndCycle
            )
            for plan in plans {
                switch plan {
                case .start(let planned, let settings, let cycle, let save):
                    let device = try addressed(planned)
                    if save || device.clientAddress != planned.clientAddress { try await store.saveDevice(device) }
                    try await fleet.add(device.spec(settings: settings, cycle: cycle))
                    added += 1
                case .restart(let device, let settings, let cycle):
                    let device = try addressed(device)
                    await fleet.remove(device.name)
                    try await store.saveDevice(device)
                    try await fleet.add(device.spec(settings: settings, cycle: cycle))
                    changed += 1
                case .keep:
                    continue
                case .remove(let name):
                    if await fleet.remove(name) { removed += 1 }
                    _ = try await store.removeDevice(named: name)
                }
            }
        } catch {
            logger.error("reload partly applied", metadata: ["error": "\(error)"])
            systemd.setStatusOverride("reload partly applied: \(error)")
            return
        }
        systemd.setStatusOverride(nil)
        logger.info("configuration reloaded", metadata: ["added": "\(added)", "removed": "\(removed)", "changed": "\(changed)"])
    }

}
