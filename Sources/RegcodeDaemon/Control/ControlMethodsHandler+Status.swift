import ControlRPC
import Foundation
import RegcodeSupport

/// `daemon.status`: version, uptime, devices by state, storage health, the wire, the activation URL and the shard.
extension ControlMethodsHandler {
    func status() async throws(RPCError) -> JSONValue {
        var byState: [String: JSONValue] = [:]
        for (phase, count) in await context.devices.phaseCounts() {
            byState[phase.rawValue] = .int(Int64(count))
        }
        let lastSeq = try await context.events.lastSequence()
        let status = context.status
        return [
            "version": .string(RegcodedVersion.current),
            "pid": .int(Int64(getpid())),
            "uptimeSeconds": .double(Date().timeIntervalSince(status.startedAt)),
            "devices": .int(Int64(await context.devices.deviceCount)),
            "states": .object(byState),
            "lastSeq": .int(lastSeq),
            "subscribers": .int(Int64(status.broadcaster.subscriberCount)),
            "cutOffSubscribers": .int(Int64(status.broadcaster.cutOffCount)),
            // The HTTP listener's `GET /events` streams (each also one of `subscribers`); null without `http`.
            "eventStreams": status.eventStreams.map { streams in
                ["open": .int(Int64(streams.openCount)), "limit": .int(Int64(streams.limit)), "refused": .int(Int64(streams.refusedCount))]
            } ?? .null,
            "requestsOutstanding": .int(Int64(await context.devices.requestsOutstanding)),
            "storage": await context.storageStatus(),
            "database": .string(status.database),
            "socket": .string(status.socket),
            "backend": status.backend.map(JSONValue.string) ?? .string("embedded simulator"),
            "activationUrl": status.activationURL.value.map(JSONValue.string) ?? .null,
            "starting": .bool(!context.devices.devicesUp.value),
            // "K/N" when this daemon runs one slice of the fleets (--shard), null when it runs them all.
            "shard": status.shard.map { .string($0.description) } ?? .null,
            "transport": context.transportStatus,
            // Whether the emulator keeps its own schedule: figures from a time it did not measure the emulator.
            "generator": status.generatorHealth.snapshot.status,
            "listeners": context.listenerStatus,
        ]
    }
}
