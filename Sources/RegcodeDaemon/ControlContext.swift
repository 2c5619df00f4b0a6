import BackendHTTP
import ControlHTTP
import ControlRPC
import DeviceEvents
import DeviceFleet
import DeviceRegistry
import Foundation
import ListenerGuard
import RegcodeEngine
import RegcodeStore
import RegcodeSupport

/// One app of a device as it runs (`apps.list`).
typealias AppStatus = Fleet.AppStatus

/// All the control methods see: the one door to the devices (the registry), the event log read-only, the figures
/// `daemon.status` reports, and the embedded simulator. Never the daemon, its fleet or its store: a device is read and
/// changed through the registry alone.
struct ControlContext: Sendable {
    /// Every device-scoped read and write.
    let devices: DeviceRegistry
    /// The stored events, read-only.
    let events: StoredEvents
    /// What `daemon.status`, `fleets.stats` and `devices.polled` report.
    let status: StatusSources
    /// The in-process backend, when it is the backend: `simulator.approve` completes codes on it.
    let simulator: (any EmbeddedBackend)?
}

/// The figures the control surface reports, each owned elsewhere and only read here.
struct StatusSources: Sendable {
    let startedAt: Date
    /// Where the daemon keeps its state and listens, and what it polls, as configured.
    let database: String
    let socket: String
    let backend: String?
    let shard: Shard?
    let activationURL: SharedValue<String?>
    let broadcaster: EventBroadcaster<EventNotification>
    /// The HTTP listener's event streams (nil without `http`).
    let eventStreams: OpenStreams?
    let pipeline: EventPipeline<ContinuousClock>
    let transportStatus: TransportStatus
    let transportStatistics: TransportStatistics
    let generatorHealth: GeneratorHealth
    let listeners: SharedValue<[ListenerCounters]>
    let liveStats: LiveStats
}

/// The event log, read-only: its last sequence number and replays of what follows a sequence number.
struct StoredEvents: Sendable {
    let store: RegcodeStore

    func lastSequence() async throws(RPCError) -> Int64 {
        do {
            return try await store.lastEventSequence()
        } catch {
            throw ControlContext.storeError(error)
        }
    }

    func replay(after since: Int64, devices: Set<String>?, names: Set<String>?) -> StoredEventReplay {
        StoredEventReplay(store: store, after: since, devices: devices, names: names)
    }
}

extension ControlContext {
    /// The control answer to a failed store call: retryable when storage may recover, else internal.
    static func storeError(_ error: any Error) -> RPCError {
        RegcodeStore.isUnavailable(error) ? .storageUnavailable("\(error)") : .internalError("database: \(error)")
    }

    /// `daemon.status`'s `storage` member: whether records reach the database, what waits in memory, and what holds
    /// deferred. Also added to every answer storage could not give.
    func storageStatus() async -> JSONValue {
        let health = status.pipeline.health
        let holds = await devices.holdTotals
        return [
            "state": .string(health.failure == nil ? (health.holding ? "catching-up" : "ok") : "failing"),
            "error": health.failure.map { .string($0.error) } ?? .null,
            "failingSince": health.failure.map { .string(ISO8601DateFormatter().string(from: $0.since)) } ?? .null,
            "backlog": .int(Int64(health.backlog)),
            "held": .bool(health.holding),
            "failedWrites": .int(Int64(health.failedWrites)),
            "holds": .int(Int64(holds.holds)),
            "deferredPolls": .int(Int64(holds.deferredPolls)),
            "deferredTimers": .int(Int64(holds.deferredTimers)),
            "deferredCalls": .int(Int64(holds.deferredCalls)),
            // SQLite's caches fill as the database grows, up to their bound: memory a soak accounts for apart.
            "sqliteMemoryBytes": .int(Int64(RegcodeStore.sqliteMemoryBytes)),
        ]
    }

    /// `daemon.status`'s `transport` member: the wire, the connections it opened, and TLS trouble.
    var transportStatus: JSONValue {
        let status = self.status.transportStatus
        let statistics = self.status.transportStatistics.counts
        var failing: [String: JSONValue] = [:]
        for (fleet, failure) in status.failingFleets() {
            failing[fleet] = ["code": .string(failure.code), "reason": .string(failure.description), "fix": .string(failure.fix)]
        }
        return [
            "tls": .bool(status.usesTLS),
            "verify": .bool(!status.usesTLS || status.settings.verify),
            "warning": status.verifyWarning.map(JSONValue.string) ?? .null,
            // Devices sharing one client address under a throttling backend, with the arithmetic.
            "sharedAddressWarning": status.sharedAddressWarning.map(JSONValue.string) ?? .null,
            "httpVersion": .string(status.settings.httpVersion.rawValue),
            "connections": [
                "plainHTTP1": .int(Int64(statistics.plainHTTP1)),
                "tlsHTTP1": .int(Int64(statistics.tlsHTTP1)),
                "tlsHTTP2": .int(Int64(statistics.tlsHTTP2)),
            ],
            "handshakes": ["full": .int(Int64(statistics.fullHandshakes)), "resumed": 0, "failed": .int(Int64(statistics.failedHandshakes))],
            "failingFleets": .object(failing),
        ]
    }

    /// `daemon.status`'s `listeners` member: by listener (`control`, `http`, `metrics`), its cap, the connections open
    /// now, and those refused over the cap or closed by a timeout since start.
    var listenerStatus: JSONValue {
        var members: [String: JSONValue] = [:]
        for listener in status.listeners.value {
            let counts = listener.snapshot
            members[listener.name] = [
                "cap": .int(Int64(counts.cap)), "open": .int(Int64(counts.open)), "accepted": .int(Int64(counts.accepted)),
                "refused": .int(Int64(counts.refused)), "timedOut": .int(Int64(counts.timedOut)),
            ]
        }
        return .object(members)
    }
}

extension Daemon {
    /// What the control surface sees of this daemon.
    var controlContext: ControlContext {
        ControlContext(
            devices: registry,
            events: StoredEvents(store: store),
            status: StatusSources(
                startedAt: startedAt,
                database: configuration.database,
                socket: configuration.socket,
                backend: configuration.backend,
                shard: configuration.shard,
                activationURL: activationURL,
                broadcaster: broadcaster,
                eventStreams: eventStreams,
                pipeline: pipeline,
                transportStatus: transportStatus,
                transportStatistics: connectionPools.statistics,
                generatorHealth: generatorHealth,
                listeners: listeners,
                liveStats: liveStats
            ),
            simulator: simulator
        )
    }
}
