import ControlRPC
import DeviceFleet
import Foundation
import Logging
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

/// The event pipeline as a service, shut down gracefully in-process.
@Suite struct EventPipelineShutdownTests {
    @Test func everyStepRecordedBeforeShutdownIsStoredInOrder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var logger = Logger(label: "pipeline-test")
        logger.logLevel = .critical
        let store = try RegcodeStore(path: directory.appendingPathComponent("state.db").path, logger: logger)
        let broadcaster = EventBroadcaster<EventNotification>()
        let pipeline = EventPipeline(store: store, broadcaster: broadcaster, observers: [], clock: ContinuousClock(), logger: logger)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pipeline.run() }
                for index in 1...200 {
                    pipeline.record(DeviceStep(device: "stb-\(index % 3)", events: [.setRequestorComplete(Int64(index))], epochMs: Int64(index)))
                }
                // Shut down at once: what was recorded is stored before run() returns, none of it lost.
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        let stored = try await store.events(after: 0, devices: nil, names: nil, limit: 1_000)
        #expect(stored.map(\.seq) == Array(1...200))
        #expect(stored.map { $0.args["status"]?.intValue } == (1...200).map { Int64($0) })
        #expect(pipeline.backlog == 0)
    }
}
