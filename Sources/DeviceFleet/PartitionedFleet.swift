import AccessEnablerAPI
import Logging
import NIOCore
import RegcodeEngine
import RegcodeSupport
import ServiceLifecycle

/// Devices spread over several ``Fleet`` actors, one per event loop, so a fleet uses every core: one actor runs
/// on one thread, and a single loop saturated at ~7,500 polls/s on the benchmark machine (Benchmarks/README.md).
///
/// A device belongs to the partition its name's ``StableHash/mixed(_:)`` picks, the same in every process and
/// after every restart, so a device removed and added again comes back to the same loop (and to the keep-alive
/// connections of that loop). Each partition is a complete fleet: its own timers, its share of the concurrent
/// calls, its own hold. Calls about one device go to its partition; figures about the fleet add the partitions'.
package final class PartitionedFleet: Service, Sendable {
    /// The partitions, in loop order.
    package let partitions: [Fleet]

    /// - Parameters:
    ///   - eventLoops: One partition per loop (at least one).
    ///   - maxConcurrentRequests: For the whole fleet: each partition gets its share (at least one).
    ///   - makeExecutor: The backend of the partition on a loop; its connections should live on that loop.
    package init(
        clock: any DeviceClock,
        timers: FleetTimers = .eventLoop,
        eventLoops: [any EventLoop],
        makeExecutor: (any EventLoop) -> any BackendExecutor,
        sink: any FleetSink,
        maxConcurrentRequests: Int = 256,
        maxPendingPerDevice: Int = 256,
        timerSlack: Duration = .zero,
        writeAhead: WriteAhead = .requests,
        logger: Logger
    ) {
        precondition(!eventLoops.isEmpty, "a fleet needs an event loop")
        partitions = eventLoops.enumerated().map { index, loop in
            var logger = logger
            if eventLoops.count > 1 { logger[metadataKey: "fleet_loop"] = "\(index)" }
            return Fleet(
                clock: clock,
                timers: timers,
                executor: makeExecutor(loop),
                sink: sink,
                eventLoop: loop,
                maxConcurrentRequests: EvenSplit.share(of: maxConcurrentRequests, part: index, count: eventLoops.count),
                maxPendingPerDevice: maxPendingPerDevice,
                timerSlack: timerSlack,
                writeAhead: writeAhead,
                logger: logger
            )
        }
    }

    /// The partition (0-based) of the device named `device` when there are `count`.
    package static func partition(ofDevice device: String, count: Int) -> Int {
        Int(StableHash.mixed(device) % UInt64(count))
    }

    /// The fleet that runs (or would run) `device`.
    package func partition(of device: String) -> Fleet {
        partitions[Self.partition(ofDevice: device, count: partitions.count)]
    }

    // MARK: Service

    /// Runs every partition as a child task; returns once all have stopped.
    package func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for fleet in partitions {
                group.addTask { try await fleet.run() }
            }
        }
    }

    /// Stops every partition; returns once every call in flight has answered.
    package func stop() async {
        await forEachPartition { await $0.stop() }
    }

    // MARK: Membership

    package func add(_ spec: Fleet.DeviceSpec) async throws(FleetError) {
        try await partition(of: spec.settings.name).add(spec)
    }

    /// Adds devices, each partition's on its own loop at the same time (a start-up's adding uses every core); stops
    /// at the first device that cannot be added in each partition and throws the first such error.
    package func add(contentsOf specs: [Fleet.DeviceSpec]) async throws(FleetError) {
        var shares = Array(repeating: [Fleet.DeviceSpec](), count: partitions.count)
        for spec in specs {
            shares[Self.partition(ofDevice: spec.settings.name, count: partitions.count)].append(spec)
        }
        let failures = await withTaskGroup(of: FleetError?.self, returning: [FleetError].self) { group in
            for (fleet, share) in zip(partitions, shares) where !share.isEmpty {
                group.addTask {
                    do throws(FleetError) {
                        try await fleet.add(contentsOf: share)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: []) { failures, failure in
                if let failure { failures.append(failure) }
            }
        }
        if let first = failures.first { throw first }
    }

    @discardableResult
    package func remove(_ name: String) async -> Bool {
        await partition(of: name).remove(name)
    }

    package func send(_ command: DeviceCommand, to device: String, app appID: String? = nil) async throws(FleetError) {
        try await partition(of: device).send(command, to: device, app: appID)
    }

    // MARK: One device

    package func snapshot(of device: String, app appID: String? = nil) async -> DeviceSnapshot? {
        await partition(of: device).snapshot(of: device, app: appID)
    }

    package func settings(of device: String) async -> DeviceSettings? {
        await partition(of: device).settings(of: device)
    }

    package func settings(of device: String, app appID: String?) async throws(FleetError) -> DeviceSettings {
        try await partition(of: device).settings(of: device, app: appID)
    }

    package func apps(of device: String) async -> [Fleet.AppStatus]? {
        await partition(of: device).apps(of: device)
    }

    package func explain(device: String, app appID: String?) async throws(FleetError) -> SSOExplanation? {
        try await partition(of: device).explain(device: device, app: appID)
    }

    package func tokens(of device: String) async throws(FleetError) -> [SharedToken] {
        try await partition(of: device).tokens(of: device)
    }

    package func tvProvider(of device: String) async throws(FleetError) -> TVProviderDevice? {
        try await partition(of: device).tvProvider(of: device)
    }

    @discardableResult
    package func updateTVProvider(
        of device: String,
        _ change: @Sendable (inout TVProviderDevice) -> Void
    ) async throws(FleetError) -> TVProviderDevice {
        try await partition(of: device).updateTVProvider(of: device, change)
    }

    package func selectTVProvider(_ choice: TVProviderChoice, device: String, app appID: String?) async throws(FleetError) {
        try await partition(of: device).selectTVProvider(choice, device: device, app: appID)
    }

    // MARK: The whole fleet

    /// Every device's name, sorted.
    package var deviceNames: [String] {
        get async {
            var names: [String] = []
            for fleet in partitions { names += await fleet.deviceNames }
            return names.sorted()
        }
    }

    package var count: Int {
        get async { await sum { await $0.count } }
    }

    /// Backend calls running or waiting for a slot.
    package var requestsOutstanding: Int {
        get async { await sum { await $0.requestsOutstanding } }
    }

    /// Backend calls waiting for a slot because every partition's `maxConcurrentRequests` are in flight.
    package var callsWaitingForSlot: Int {
        get async { await sum { await $0.callsWaitingForSlot } }
    }

    /// How many devices are in each phase.
    package func phaseCounts() async -> [DevicePhase: Int] {
        var counts: [DevicePhase: Int] = [:]
        for fleet in partitions {
            counts.merge(await fleet.phaseCounts(), uniquingKeysWith: +)
        }
        return counts
    }

    /// Devices by state, grouped by a key of the caller's.
    package func phaseCounts<Key: Hashable & Sendable>(
        groupedBy key: @escaping @Sendable (String) -> Key
    ) async -> [Key: [DevicePhase: Int]] {
        var counts: [Key: [DevicePhase: Int]] = [:]
        for fleet in partitions {
            counts.merge(await fleet.phaseCounts(groupedBy: key)) { $0.merging($1, uniquingKeysWith: +) }
        }
        return counts
    }

    /// Holds every partition (see ``Fleet/hold(reason:)``).
    package func hold(reason: String) async {
        await forEachPartition { await $0.hold(reason: reason) }
    }

    package func release() async {
        await forEachPartition { await $0.release() }
    }

    /// Totals over every hold: a hold holds every partition at once, so it counts once.
    package var holdTotals: HoldTotals {
        get async {
            var totals = HoldTotals()
            for fleet in partitions {
                let part = await fleet.holdTotals
                totals.holds = max(totals.holds, part.holds)
                totals.deferredPolls += part.deferredPolls
                totals.deferredTimers += part.deferredTimers
                totals.deferredCalls += part.deferredCalls
            }
            return totals
        }
    }

    private func sum(_ figure: (Fleet) async -> Int) async -> Int {
        var total = 0
        for fleet in partitions { total += await figure(fleet) }
        return total
    }

    private func forEachPartition(_ body: @Sendable @escaping (Fleet) async -> Void) async {
        await withDiscardingTaskGroup { group in
            for fleet in partitions {
                group.addTask { await body(fleet) }
            }
        }
    }
}
