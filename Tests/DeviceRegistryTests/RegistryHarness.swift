import ControlRPC
import DeviceFleet
import Foundation
import Logging
import NIOPosix
import RegcodeEngine
import RegcodeRecords
import RegcodeStore
import RegcodeTestSupport
import Synchronization
import Testing

@testable import DeviceEvents
@testable import DeviceRegistry

/// The real SQLite store behind the pipeline, with a gate: while it is closed, a batch waits before its
/// transaction (as a slow disk makes it wait), so a test can hold a device's steps queued.
final class GatedStepStore: StepStore {
    let store: RegcodeStore
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((true, []))
    /// The devices of each batch that waits at the closed gate.
    let held: AsyncStream<[String]>
    private let heldContinuation: AsyncStream<[String]>.Continuation

    init(store: RegcodeStore) {
        self.store = store
        (held, heldContinuation) = AsyncStream.makeStream()
    }

    func close() { state.withLock { $0.open = false } }

    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func apply(_ steps: [DeviceStep]) async throws -> [StoredEvent] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { state -> Bool in
                guard !state.open else { return false }
                state.waiting.append(continuation)
                return true
            }
            if waits {
                heldContinuation.yield(steps.map(\.device))
            } else {
                continuation.resume()
            }
        }
        return try await store.apply(steps)
    }

    /// Waits until a batch holding `device`'s step waits at the gate.
    func waitUntilHeld(_ device: String) async {
        for await devices in held where devices.contains(device) { return }
    }
}

/// A registry over a real fleet (manual clock, silent backend), a real pipeline and a temporary SQLite store.
struct RegistryHarness {
    let directory: URL
    let store: RegcodeStore
    let gate: GatedStepStore
    let clock = ManualClock()
    let liveStats = LiveStats()
    let pipeline: EventPipeline<ManualClock>
    let fleet: PartitionedFleet
    let registry: DeviceRegistry

    static let logger: Logger = {
        var logger = Logger(label: "registry-test")
        logger.logLevel = .critical
        return logger
    }()

    init(fleets: [FleetConfiguration]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try RegcodeStore(path: directory.appendingPathComponent("state.db").path, logger: Self.logger)
        gate = GatedStepStore(store: store)
        let liveStats = self.liveStats
        var limits = EventPipeline<ManualClock>.Limits()
        // The manual clock never moves here: no batch waits for company.
        limits.gather = .zero
        pipeline = EventPipeline(
            store: gate,
            broadcaster: EventBroadcaster<EventNotification>(),
            observers: [{ steps, _ in liveStats.record(steps) }],
            limits: limits,
            clock: clock,
            logger: Self.logger
        )
        fleet = PartitionedFleet(
            clock: clock,
            timers: .clockSleeps,
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
    }

    /// A fleet of `count` idle devices named `stb-N`, each with a forwarded-for address of 10.0.0.0/29.
    static func fleet(count: Int, apps: [AppConfiguration] = []) -> FleetConfiguration {
        var fleet = FleetConfiguration()
        fleet.name = "stb"
        fleet.count = count
        fleet.scenario = .idle
        fleet.clientAddress = ClientAddressConfiguration(mode: .forwardedFor, addresses: "10.0.0.0/29")
        if !apps.isEmpty {
            fleet.apps = apps
            fleet.sso = DeviceSSOSettings()
        }
        return fleet
    }

    /// Runs the pipeline and the fleet around `body`, then stops both.
    func run(_ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pipeline.run() }
            group.addTask { try await fleet.run() }
            do {
                try await body()
            } catch {
                gate.open()
                await fleet.stop()
                group.cancelAll()
                throw error
            }
            gate.open()
            await fleet.stop()
            group.cancelAll()
            try await group.waitForAll()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A step of `device` that learned DCR credentials, as a device records one after registering.
    func learnedStep(_ device: String) -> DeviceStep {
        var snapshot = DeviceSnapshot()
        snapshot.credentials = ClientCredentials(clientID: "learned-client", clientSecret: "learned-secret")
        return DeviceStep(
            device: device,
            snapshot: snapshot,
            polls: [
                PollAttempt(code: "CODE1", plannedEpochMs: 1, sentEpochMs: 1, latencyMs: 1, httpStatus: 202, outcome: .pending, nextDelayMs: 5_000)
            ],
            epochMs: clock.epochMillisecondsNow
        )
    }

    func storedRecord(_ device: String) async throws -> StoredDevice? {
        try await store.loadDevices().first { $0.name == device }
    }

    /// Waits (without time) until a change waits at the pipeline's barrier, or `done` says the change finished.
    func waitForBarrierOrEnd(_ done: SharedValue<Bool>) async {
        for _ in 0..<1_000_000 {
            if pipeline.waitingBarriers > 0 || done.value { return }
            await Task.yield()
        }
        Issue.record("neither waited at the barrier nor finished")
    }
}
