import AdobePassClient
import Logging
import NIOCore
import NIOPosix
import PassSimulator
import RegcodeEngine
import RegcodeRecords
import Synchronization
import Testing

@testable import DeviceFleet

/// Notes, for every step the fleet records, whether it was recorded on `loop`, and streams the polls.
final class LoopCheckingSink: FleetSink {
    let loop: any EventLoop
    private let state = Mutex<(steps: Int, offLoop: Int)>((0, 0))
    let polls: AsyncStream<PollAttempt>
    private let continuation: AsyncStream<PollAttempt>.Continuation

    init(loop: any EventLoop) {
        self.loop = loop
        (polls, continuation) = AsyncStream.makeStream()
    }

    func record(_ step: DeviceStep) {
        let onLoop = loop.inEventLoop
        state.withLock {
            $0.steps += 1
            if !onLoop { $0.offLoop += 1 }
        }
        for poll in step.polls { continuation.yield(poll) }
    }

    var counts: (steps: Int, offLoop: Int) { state.withLock { $0 } }
}

@Suite struct EventLoopTests {
    /// The daemon gives the fleet and its connections one loop; every engine step, whether a timer or an answer
    /// started it, must run there (the loop's own timers fire the polls of a system-clock fleet).
    @Test func aSystemClockFleetStepsItsDevicesOnTheLoopItWasGiven() async throws {
        var simulatorConfiguration = SimulatorConfiguration()
        simulatorConfiguration.statementKey = FleetEndToEndTests.statementKey
        let simulator = PassSimulator(configuration: simulatorConfiguration)
        try await simulator.withRunningServer { baseURL in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let backend = LoopBoundClient(baseURL: baseURL, loops: [loop])
            let client = backend.client
            let sink = LoopCheckingSink(loop: loop)
            let fleet = Fleet(clock: SystemDeviceClock(), executor: client, sink: sink, eventLoop: loop, logger: Logger(label: "fleet"))
            #expect(fleet.eventLoop === loop)

            let polls = try await withRunningFleet(fleet) {
                var settings = DeviceSettings(name: "stb-loop", requestor: "REF30")
                settings.softwareStatement = FleetEndToEndTests.statement
                settings.polling.interval = .seconds(1)
                try await fleet.add(.init(settings: settings, deviceID: "8a0f4c1e-1111-4bd2-9f00-0000000000aa", seed: 7))
                return await withTaskGroup(of: Int.self) { group in
                    group.addTask {
                        var seen = 0
                        for await _ in sink.polls {
                            seen += 1
                            if seen == 3 { break }
                        }
                        return seen
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(20))
                        return -1
                    }
                    let first = await group.next() ?? -1
                    group.cancelAll()
                    return first
                }
            }
            try await backend.shutdown()

            #expect(polls == 3, "three polls, each started by the loop's timer")
            let counts = sink.counts
            #expect(counts.steps >= 5)
            #expect(counts.offLoop == 0)
        }
    }
}
