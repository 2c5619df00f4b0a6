import AccessEnablerAPI
import AdobePassClient
import AsyncHTTPClient
import ControlSocket
import DeviceFleet
import Foundation
import Hummingbird
import Logging
import NIOPosix
import PassSimulator
import RegcodeEngine
import RegcodeStore
import ServiceLifecycle
import UnixSignals
import Synchronization
import RegcodeSupport

/// The assembled daemon: store, fleet, event pipeline, control socket and (when no backend is
/// configured) the in-process simulator, run as one swift-service-lifecycle `ServiceGroup`.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    private let catalogState: Mutex<DeviceCatalog>
    /// The fleets as last (re)loaded.
    var catalog: DeviceCatalog { catalogState.withLock { $0 } }
    let environment: [String: String]
    let systemd: SystemdService
    private let reloadConfiguration: (@Sendable () throws -> DaemonConfiguration)?
    let store: RegcodeStore
    let broadcaster: EventBroadcaster<JSONValue>
    let pipeline: EventPipeline
    let fleet: Fleet<SystemDeviceClock>
    let backend = DeferredBackend()
    let httpClient: HTTPClient
    let logger: Logger
    let startedAt = Date()
    let activationURL = SharedValue<String?>(nil)
    private let simulator: PassSimulator?
    let metrics: RegcodeMetrics?

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
        self.catalogState = Mutex(try DeviceCatalog.load(configuration: configuration, environment: environment))
        self.store = try RegcodeStore(path: configuration.database, logger: logger)
        self.broadcaster = EventBroadcaster(bufferSize: configuration.subscriberBuffer)
        let printCodes = configuration.printCodes ?? configuration.usesEmbeddedSimulator
        let activationURL = self.activationURL
        var observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void] = []
        if printCodes {
            observers.append { steps, _ in CodePrinter.print(steps, activationURL: activationURL.value) }
        }
        if configuration.metrics != nil {
            let metrics = RegcodeMetrics()
            self.metrics = metrics
            observers.append { steps, _ in metrics.record(steps) }
        } else {
            self.metrics = nil
        }
        self.pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: observers, logger: logger)
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8, configuration.maxConcurrentRequests)
        // A refused connection should fail fast and back off, not hang for AsyncHTTPClient's 10 s default.
        httpConfiguration.timeout.connect = .seconds(3)
        self.httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
        self.fleet = Fleet(
            clock: SystemDeviceClock(),
            executor: backend,
            sink: pipeline,
            maxConcurrentRequests: configuration.maxConcurrentRequests,
            logger: logger
        )
        self.systemd = SystemdService(
            notifier: SystemdNotifier(environment: environment),
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment),
            fleet: fleet,
            logger: logger
        )
        if configuration.usesEmbeddedSimulator {
            var simulatorConfiguration = SimulatorConfiguration()
            simulatorConfiguration.autoApproveAfter = configuration.simulatorAutoApproveAfter
            // The in-process backend must know the v1 key pairs the fleets sign with.
            for secrets in catalogState.withLock({ Array($0.secrets.values) }) {
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

    /// Runs until SIGTERM or SIGINT, then stops gracefully: the socket closes, devices stop,
    /// calls in flight finish, the last steps are stored.
    public func run() async throws {
        let ready = AsyncStream<String>.makeStream()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: pipeline),
        ]
        if let simulator {
            let host = configuration.simulatorHost
            let app = simulator.makeApplication(host: host, port: configuration.simulatorPort) { port in
                ready.continuation.yield("http://\(host):\(port)")
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
        services.append(.init(service: Starter(daemon: self, backendURLs: ready.stream)))
        services.append(.init(service: RetentionService(store: store, retention: configuration.retention, logger: logger)))
        services.append(.init(service: ReloadService(daemon: self)))
        if let metrics, let address = configuration.metrics.flatMap(HostPort.parse) {
            services.append(.init(service: MetricsService(metrics: metrics, address: address, fleet: fleet, broadcaster: broadcaster, logger: logger)))
        }
        // Last: shut down first, so STOPPING=1 goes out before anything else stops.
        services.append(.init(service: systemd))

        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        do {
            try await group.run()
        } catch {
            try? await httpClient.shutdown()
            throw error
        }
        try await httpClient.shutdown()
    }

    /// Binds the backend and brings every stored and configured device up.
    func start(backendURL: String) async throws {
        var clientConfiguration = AdobePassClientConfiguration(baseURL: backendURL)
        clientConfiguration.requestTimeout = .seconds(30)
        backend.bind(AdobePassClient(configuration: clientConfiguration, httpClient: httpClient, logger: logger))
        if simulator != nil {
            let url = "\(backendURL)/activate"
            activationURL.value = url
            CodePrinter.say("activation page: \(url)")
        }
        let specs = try reconcileDevices()
        var ramps: [String: (ramp: Duration, specs: [Fleet<SystemDeviceClock>.DeviceSpec])] = [:]
        var started = 0
        for spec in specs {
            // A device resuming a pending code is not held back: its code is already ticking.
            if spec.snapshot.code == nil, let fleetConfiguration = catalog.fleet(forDevice: spec.settings.name),
                let ramp = fleetConfiguration.ramp, ramp > .zero
            {
                ramps[fleetConfiguration.name, default: (ramp, [])].specs.append(spec)
            } else {
                try await fleet.add(spec)
                started += 1
            }
        }
        await systemd.reached(.devicesResumed)
        logger.info("regcoded ready", metadata: [
            "devices": "\(started)", "ramping": "\(specs.count - started)", "socket": "\(configuration.socket)",
            "database": "\(configuration.database)", "backend": "\(backendURL)",
        ])
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

    /// Matches configured devices with stored ones: stored identity, state and seed are kept;
    /// new devices get a fresh identity; devices no longer configured are forgotten unless
    /// they were added over the socket.
    func reconcileDevices() throws -> [Fleet<SystemDeviceClock>.DeviceSpec] {
        let stored = Dictionary(try store.loadDevices().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var specs: [Fleet<SystemDeviceClock>.DeviceSpec] = []
        var configured = Set<String>()
        for fleetConfiguration in catalog.fleets {
            for name in fleetConfiguration.deviceNames {
                configured.insert(name)
                let settings = catalog.settings(for: name, fleet: fleetConfiguration)
                if let existing = stored[name] {
                    var device = existing
                    device.settings = settings
                    device.scenario = fleetConfiguration.scenario
                    device.fleet = fleetConfiguration.name
                    device.addedAtRuntime = false
                    if existing.settings != Self.withoutSecrets(settings) || existing.scenario != device.scenario
                        || existing.fleet != device.fleet || existing.addedAtRuntime
                    {
                        try store.saveDevice(device)
                    }
                    specs.append(device.spec(settings: settings, cycle: fleetConfiguration.cycle))
                } else {
                    let device = StoredDevice.fresh(name: name, settings: settings, scenario: fleetConfiguration.scenario, fleet: fleetConfiguration.name)
                    try store.saveDevice(device)
                    specs.append(device.spec(settings: settings, cycle: fleetConfiguration.cycle))
                }
            }
        }
        for (name, device) in stored where !configured.contains(name) {
            if device.addedAtRuntime {
                let template = device.fleet.flatMap { catalog.fleet(named: $0) } ?? catalog.fleets.first
                specs.append(device.spec(settings: runtimeSettings(for: device), cycle: template?.cycle))
            } else {
                _ = try store.removeDevice(named: name)
                logger.info("device no longer configured; removed", metadata: ["device": "\(name)"])
            }
        }
        return specs
    }

    /// Stored settings of a device added over the socket, with its fleet's secrets restored.
    func runtimeSettings(for device: StoredDevice) -> DeviceSettings {
        var settings = device.settings
        let fleet = device.fleet.flatMap { catalog.fleet(named: $0) } ?? catalog.fleets.first
        let secrets = fleet.flatMap { catalog.secrets[$0.name] } ?? FleetSecrets(softwareStatement: DeviceCatalog.embeddedSoftwareStatement)
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
        let newCatalog: DeviceCatalog
        do {
            let configuration = try reloadConfiguration()
            try configuration.validate()
            newCatalog = try DeviceCatalog.load(configuration: configuration, environment: environment)
            for (key, old, new) in [
                ("database", self.configuration.database, configuration.database),
                ("socket", self.configuration.socket, configuration.socket),
                ("backend", self.configuration.backend ?? "", configuration.backend ?? ""),
            ] where old != new {
                logger.warning("changing '\(key)' needs a restart; keeping the running value", metadata: ["key": "\(key)"])
            }
        } catch {
            logger.error("reload failed; keeping the running configuration", metadata: ["error": "\(error)"])
            systemd.setStatusOverride("reload failed: \(error)")
            return
        }
        let oldCatalog = catalogState.withLock { state -> DeviceCatalog in
            defer { state = newCatalog }
            return state
        }
        var added = 0, removed = 0, changed = 0
        do {
            let stored = Dictionary(try store.loadDevices().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var wanted = Set<String>()
            for fleetConfiguration in newCatalog.fleets {
                for name in fleetConfiguration.deviceNames {
                    wanted.insert(name)
                    let settings = newCatalog.settings(for: name, fleet: fleetConfiguration)
                    if let current = await fleet.settings(of: name), let existing = stored[name] {
                        guard current != settings || existing.scenario != fleetConfiguration.scenario || existing.addedAtRuntime else { continue }
                        var device = existing
                        device.snapshot = await fleet.snapshot(of: name) ?? existing.snapshot
                        device.settings = settings
                        device.scenario = fleetConfiguration.scenario
                        device.fleet = fleetConfiguration.name
                        device.addedAtRuntime = false
                        await fleet.remove(name)
                        try store.saveDevice(device)
                        try await fleet.add(device.spec(settings: settings, cycle: fleetConfiguration.cycle))
                        changed += 1
                    } else {
                        var device = stored[name] ?? .fresh(name: name, settings: settings, scenario: fleetConfiguration.scenario, fleet: fleetConfiguration.name)
                        device.settings = settings
                        device.scenario = fleetConfiguration.scenario
                        device.fleet = fleetConfiguration.name
                        device.addedAtRuntime = false
                        try store.saveDevice(device)
                        try await fleet.add(device.spec(settings: settings, cycle: fleetConfiguration.cycle))
                        added += 1
                    }
                }
            }
            let previouslyConfigured = Set(oldCatalog.fleets.flatMap(\.deviceNames))
            for name in previouslyConfigured.subtracting(wanted) where stored[name]?.addedAtRuntime != true {
                if await fleet.remove(name) { removed += 1 }
                _ = try store.removeDevice(named: name)
            }
        } catch {
            logger.error("reload partly applied", metadata: ["error": "\(error)"])
            systemd.setStatusOverride("reload partly applied: \(error)")
            return
        }
        systemd.setStatusOverride(nil)
        logger.info("configuration reloaded", metadata: ["added": "\(added)", "removed": "\(removed)", "changed": "\(changed)"])
    }

    static func withoutSecrets(_ settings: DeviceSettings) -> DeviceSettings {
        var settings = settings
        settings.softwareStatement = nil
        settings.signingKeys = nil
        return settings
    }
}

/// Waits for the backend address, then brings the devices up; stays until shutdown so the
/// group treats it as a service like the others.
struct Starter: Service {
    let daemon: Daemon
    let backendURLs: AsyncStream<String>

    func run() async throws {
        var iterator = backendURLs.makeAsyncIterator()
        guard let url = await iterator.next() else { return }
        try await daemon.start(backendURL: url)
        try? await gracefulShutdown()
    }
}

/// Reloads the configuration on SIGHUP.
struct ReloadService: Service {
    let daemon: Daemon

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await daemon.reload()
        }
    }
}

/// Prunes the poll and event logs on a schedule, so week-long soaks stay bounded.
struct RetentionService: Service {
    let store: RegcodeStore
    let retention: RetentionConfiguration
    let logger: Logger
    var period: Duration = .seconds(600)

    func run() async throws {
        guard retention.pollAttempts != nil || retention.events != nil else { return }
        while !Task.isCancelled {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            do {
                let store = self.store
                let retention = self.retention
                let removed = try await NIOThreadPool.singleton.runIfActive {
                    try store.prune(
                        pollAttemptsBefore: retention.pollAttempts.map { now - $0.milliseconds },
                        eventsBefore: retention.events.map { now - $0.milliseconds }
                    )
                }
                if removed.polls > 0 || removed.events > 0 {
                    logger.info("pruned logs", metadata: ["poll_attempts": "\(removed.polls)", "events": "\(removed.events)"])
                }
            } catch {
                logger.error("pruning failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
            } catch {
                return
            }
        }
    }
}

/// Human-readable lines on standard output: the activation page and each code.
enum CodePrinter {
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data(("regcoded: " + line + "\n").utf8))
    }

    static func print(_ steps: [DeviceStep], activationURL: String?) {
        for step in steps {
            for event in step.events {
                switch event {
                case .status(let report) where report.id == .registrationCode:
                    guard let code = report.message else { continue }
                    let expires = report.extra["expires"]?.intValue.map { " (expires \(EventEncoding.timestamp($0)))" } ?? ""
                    let url = activationURL.map { " — enter it at \($0)" } ?? ""
                    say("\(step.device): code \(code)\(expires)\(url)")
                case .status(let report) where report.level == .error:
                    say("\(step.device): \(report.id) \(report.message ?? "")")
                case .setAuthenticationStatus(AccessEnabler.statusSuccess, _):
                    say("\(step.device): authenticated")
                default:
                    continue
                }
            }
        }
    }
}

/// A value shared between tasks and closures (a `Mutex` cannot be captured).
final class SharedValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

extension StoredDevice {
    /// A device seen for the first time: a fresh identity and jitter seed, no state yet.
    static func fresh(name: String, settings: DeviceSettings, scenario: Scenario, fleet: String?, addedAtRuntime: Bool = false) -> StoredDevice {
        StoredDevice(
            name: name, deviceID: UUID().uuidString.lowercased(), settings: settings, scenario: scenario,
            seed: UInt64.random(in: 1...UInt64.max), snapshot: DeviceSnapshot(), fleet: fleet, addedAtRuntime: addedAtRuntime
        )
    }

    /// What the fleet runs for this device; `settings` carries the secrets the store never holds.
    func spec(settings: DeviceSettings, cycle: CyclePlan?) -> Fleet<SystemDeviceClock>.DeviceSpec {
        .init(settings: settings, deviceID: deviceID, snapshot: snapshot, scenario: scenario, seed: seed, cycle: cycle)
    }
}
