import ControlSocket
import DeviceFleet
import DeviceRegistry
import Foundation
import KeepAliveHTTP
import ListenerGuard
import RegcodeStore
import RegcodeSupport

/// `daemon.status`: version, uptime, devices by state, storage health, the wire, the activation URL and the shard.
extension DaemonControlHandler {
    func status() async throws(RPCError) -> JSONValue {
        var byState: [String: JSONValue] = [:]
        for (phase, count) in await daemon.fleet.phaseCounts() {
            byState[phase.rawValue] = .int(Int64(count))
        }
        let lastSeq = try await storeCall { store in try await store.lastEventSequence() }
        return [
            "version": .string(RegcodedVersion.current),
            "pid": .int(Int64(getpid())),
            "uptimeSeconds": .double(Date().timeIntervalSince(daemon.startedAt)),
            "devices": .int(Int64(await daemon.fleet.count)),
            "states": .object(byState),
            "lastSeq": .int(lastSeq),
            "subscribers": .int(Int64(daemon.broadcaster.subscriberCount)),
            "cutOffSubscribers": .int(Int64(daemon.broadcaster.cutOffCount)),
            // The HTTP listener's `GET /events` streams (each also one of `subscribers`); null without `http`.
            "eventStreams": daemon.eventStreams.map { streams in
                ["open": .int(Int64(streams.openCount)), "limit": .int(Int64(streams.limit)), "refused": .int(Int64(streams.refusedCount))]
            } ?? .null,
            "requestsOutstanding": .int(Int64(await daemon.fleet.requestsOutstanding)),
            "storage": Self.storageStatus(daemon.pipeline.health, holds: await daemon.fleet.holdTotals),
            "database": .string(daemon.configuration.database),
            "socket": .string(daemon.configuration.socket),
            "backend": daemon.configuration.backend.map(JSONValue.string) ?? .string("embedded simulator"),
            "activationUrl": daemon.activationURL.value.map(JSONValue.string) ?? .null,
            "starting": .bool(!daemon.devicesUp.value),
            // "K/N" when this daemon runs one slice of the fleets (--shard), null when it runs them all.
            "shard": daemon.configuration.shard.map { .string($0.description) } ?? .null,
            "transport": Self.transportStatus(daemon.transportStatus, statistics: daemon.connectionPools.statistics.counts),
            // Whether the emulator keeps its own schedule: figures from a time it did not measure the emulator.
            "generator": daemon.generatorHealth.snapshot.status,
            "listeners": Self.listenerStatus(daemon.listeners.value),
        ]
    }

    /// `daemon.status`'s `listeners` member: by listener (`control`, `http`, `metrics`), its cap, the connections open
    /// now, and those refused over the cap or closed by a timeout since start.
    static func listenerStatus(_ listeners: [ListenerCounters]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for listener in listeners {
            let counts = listener.snapshot
            members[listener.name] = [
                "cap": .int(Int64(counts.cap)), "open": .int(Int64(counts.open)), "accepted": .int(Int64(counts.accepted)),
                "refused": .int(Int64(counts.refused)), "timedOut": .int(Int64(counts.timedOut)),
            ]
        }
        return .object(members)
    }

    /// `daemon.status`'s `transport` member: the wire, the connections it opened, and TLS trouble.
    static func transportStatus(_ status: TransportStatus, statistics: TransportStatistics.Counts) -> JSONValue {
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

    /// `daemon.status`'s `storage` member: whether records reach the database, what waits in
    /// memory, and what holds deferred.
    static func storageStatus(_ health: StorageHealth, holds: HoldTotals) -> JSONValue {
        [
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
}
