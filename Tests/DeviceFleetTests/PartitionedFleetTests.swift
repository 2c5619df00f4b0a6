import AdobePassClient
import Logging
import NIOCore
import NIOPosix
import PassSimulator
import RegcodeEngine
import RegcodeSupport
import Synchronization
import Testing

@testable import DeviceFleet

/// Notes, for every step, whether it was recorded on the loop of its device's partition, and counts each device's polls.
final class PartitionCheckingSink: FleetSink {
    let loops: [any EventLoop]
    private let state = Mutex<(steps: Int, offLoop: Int, polled: Set<String>)>((0, 0, []))
    let polled: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    init(loops: [any EventLoop]) {
        self.loops = loops
        (polled, continuation) = AsyncStream.makeStream()
    }

    func record(_ step: DeviceStep) {
        let loop = loops[PartitionedFleet.partition(ofDevice: step.device, count: loops.count)]
        let onLoop = loop.inEventLoop
        let devicesPolled: Int = state.withLock {
            $0.steps += 1
            if !onLoop { $0.offLoop += 1 }
            if !step.polls.isEmpty { $0.polled.insert(step.device) }
            return $0.polled.count
        }
        if !step.polls.isEmpty { continuation.yield(devicesPolled) }
    }

    var counts: (steps: Int, offLoop: Int) { state.withLock { ($0.steps, $0.offLoop) } }
}

@Suite struct PartitionedFleetTests {
    @Test func aDeviceBelongsToTheSamePartitionEveryTimeAndNamesSpreadEvenly() {
        typealias Partitioned = PartitionedFleet
        // Fixed values (FNV-1a, then SplitMix64's mix): a device lands on the same loop in every process and release.
        #expect(StableHash.mixed("stb-1") == 0xe4d9_0844_dd2a_d487)
        #expect(["stb-1", "stb-2", "stb-3", "stb-4"].map { Partitioned.partition(ofDevice: $0, count: 2) } == [1, 1, 1, 0])
        #expect(["stb-1", "stb-2", "stb-3", "stb-4"].map { Partitioned.partition(ofDevice: $0, count: 3) } == [0, 2, 2, 2])
        let names = (1...10_000).map { "stb-\($0)" }
        for count in [2, 3, 4] {
            var sizes = Array(repeating: 0, count: count)
            for name in names { sizes[Partitioned.partition(ofDevice: name, count: count)] += 1 }
            let even = names.count / count
            #expect(sizes.allSatisfy { abs($0 - even) < even / 20 }, "\(count) partitions: \(sizes)")
        }
        #expect(Partitioned.partition(ofDevice: "a", count: 1) == 0)
    }

    @Test func concurrentCallsAreSplitWithoutLosingOrAddingAny() {
        for (total, count) in [(256, 2), (5, 2), (7, 3), (100, 8)] {
            let shares = (0..<count).map { EvenSplit.share(of: total, part: $0, count: count) }
            #expect(shares.reduce(0, +) == total, "\(total) over \(count): \(shares)")
            #expect(shares.max()! - shares.min()! <= 1)
        }
        // Fewer than one each: every partition still gets one.
        #expect((0..<4).map { EvenSplit.share(of: 2, part: $0, count: 4) } == [1, 1, 1, 1])
    }

    /// Devices on two loops against a real simulator: each device's steps run on its partition's loop (timers,
    /// answers and the connections behind them), and the fleet's figures add the partitions'.
    @Test func devicesRunOnTheirPartitionsLoopAndFiguresAddUp() async throws {
        var simulatorConfiguration = SimulatorConfiguration()
        simulatorConfiguration.statementKey = FleetEndToEndTests.statementKey
        // Eight devices from one address: the throttle (by address) is another test's subject.
        simulatorConfiguration.throttleEnabled = false
        let simulator = PassSimulator(configuration: simulatorConfiguration)
        try await simulator.withRunningServer { baseURL in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let loops = Array(group.makeIterator())
            let backend = LoopBoundClient(baseURL: baseURL, loops: loops)
            let client = backend.client
            let sink = PartitionCheckingSink(loops: loops)
            let fleet = PartitionedFleet(
                clock: SystemDeviceClock(),
                eventLoops: loops,
                makeExecutor: { _ in client },
                sink: sink,
                maxConcurrentRequests: 8,
                logger: Logger(label: "fleet")
            )
            #expect(fleet.partitions.map(\.eventLoop).elementsEqual(loops) { $0 === $1 })
            let names = (1...8).map { "stb-part-\($0)" }
            let expected = names.map { PartitionedFleet.partition(ofDevice: $0, count: 2) }
            #expect(Set(expected).count == 2, "the names chosen must reach both partitions")

            let polledAll = try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await fleet.run() }
                let specs = names.enumerated().map { index, name in
                    var settings = DeviceSettings(name: name, requestor: "REF30")
                    settings.softwareStatement = FleetEndToEndTests.statement
                    settings.polling.interval = .seconds(1)
                    return Fleet.DeviceSpec(
                        settings: settings,
                        deviceID: "8a0f4c1e-2222-4bd2-9f00-00000000000\(index)",
                        seed: UInt64(index)
                    )
                }
                try await fleet.add(contentsOf: specs)
                let polledAll = await withTaskGroup(of: Bool.self) { wait in
                    wait.addTask {
                        for await devices in sink.polled where devices == names.count { return true }
                        return false
                    }
                    wait.addTask {
                        try? await Task.sleep(for: .seconds(30))
                        return false
                    }
                    let first = await wait.next() ?? false
                    wait.cancelAll()
                    return first
                }

                #expect(await fleet.count == names.count)
                #expect(await fleet.deviceNames == names.sorted())
                #expect(await fleet.phaseCounts().values.reduce(0, +) == names.count)
                for (index, partition) in fleet.partitions.enumerated() {
                    #expect(await partition.count == expected.filter { $0 == index }.count)
                }
                // Removed and added again, a device comes back to its partition.
                let name = names[0]
                let settings = try #require(await fleet.settings(of: name))
                #expect(await fleet.remove(name))
                #expect(await fleet.snapshot(of: name) == nil)
                try await fleet.add(Fleet.DeviceSpec(settings: settings, deviceID: specs[0].deviceID, seed: 1))
                #expect(await fleet.partitions[expected[0]].snapshot(of: name) != nil)
                #expect(await fleet.partitions[1 - expected[0]].snapshot(of: name) == nil)

                await fleet.stop()
                try await tasks.waitForAll()
                return polledAll
            }
            try await backend.shutdown()
            try await group.shutdownGracefully()

            #expect(polledAll, "every device polled")
            let counts = sink.counts
            #expect(counts.steps >= names.count * 3)
            #expect(counts.offLoop == 0, "every step on its device's partition loop")
        }
    }
}
