import BackendHTTP
import ControlRPC
import DeviceEvents
import DeviceFleet
import DeviceRegistry
import Foundation
import Logging
import NIOPosix
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport

@testable import RegcodeDaemon

/// The control methods over a registry of their own: a real fleet of idle devices (a backend that never answers),
/// a real event pipeline and a temporary SQLite store, with no daemon around them. What the handler reaches is
/// exactly its ``ControlContext``.
struct ControlHarness {
    let directory: String
    let store: RegcodeStore
    let pipeline: EventPipeline<ContinuousClock>
    let fleet: PartitionedFleet
    let registry: DeviceRegistry
    let handler: ControlMethodsHandler

    static let peer = ControlPeer.unixSocket(PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))

    static let logger: Logger = {
        var logger = Logger(label: "control-harness")
        logger.logLevel = .critical
        return logger
    }()

    /// - Parameter fleets: the configured fleets; their devices exist once ``start()`` ran.
    init(fleets: [FleetConfiguration] = []) throws {
        directory = "/tmp/rch-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try RegcodeStore(path: "\(directory)/state.sqlite", logger: Self.logger)
        let liveStats = LiveStats()
        let broadcaster = EventBroadcaster<EventNotification>()
        pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: [], clock: ContinuousClock(), logger: Self.logger)
        fleet = PartitionedFleet(
            clock: SystemDeviceClock(),
            eventLoops: [MultiThreadedEventLoopGroup.singleton.next()],
            makeExecutor: { _ in SilentBackend() },
            sink: pipeline,
            logger: Self.logger
        )
        registry = DeviceRegistry(
            catalog: DeviceCatalog(fleets: fleets, secrets: [:]),
            shard: nil,
            fleet: fleet,
            store: store,
            barrier: pipeline,
            liveStats: liveStats,
            logger: Self.logger
        )
        let context = ControlContext(
            devices: registry,
            events: StoredEvents(store: store),
            status: StatusSources(
                startedAt: Date(),
                database: "\(directory)/state.sqlite",
                socket: "\(directory)/regcoded.sock",
                backend: nil,
                shard: nil,
                activationURL: SharedValue(nil),
                broadcaster: broadcaster,
                eventStreams: nil,
                pipeline: pipeline,
                transportStatus: TransportStatus(settings: TLSClientSettings(), usesTLS: false, liveStats: liveStats),
                transportStatistics: TransportStatistics(),
                generatorHealth: GeneratorHealth(),
                listeners: SharedValue([]),
                liveStats: liveStats
            ),
            simulator: nil
        )
        handler = ControlMethodsHandler(context: context)
    }

    /// Brings the configured devices up, as the daemon's start does; until then calls answer "starting".
    func start() async throws {
        _ = try await registry.start()
        registry.devicesUp.value = true
    }

    /// Runs the pipeline and the fleet around `body`, then stops both and removes the store.
    func run(_ body: () async throws -> Void) async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pipeline.run() }
            group.addTask { try await fleet.run() }
            do {
                try await body()
            } catch {
                await fleet.stop()
                group.cancelAll()
                throw error
            }
            await fleet.stop()
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    /// A fleet of `count` idle devices named `stb-N`.
    static func idleFleet(count: Int) -> FleetConfiguration {
        var fleet = FleetConfiguration()
        fleet.name = "stb"
        fleet.count = count
        fleet.scenario = .idle
        return fleet
    }
}
