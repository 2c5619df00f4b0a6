import Foundation
import RegcodeEngine
import RegcodeTestSupport
import Testing

@testable import DeviceEvents
@testable import DeviceRegistry

/// ``EventPipeline/flushed(device:)``: a per-device wait, resumed by the commit of the batch holding the device's
/// last step, without time passing.
@Suite struct EventPipelineBarrierTests {
    @Test func aDeviceWithNothingQueuedPassesWhileAnothersBatchIsHeld() async throws {
        let h = try RegistryHarness(fleets: [])
        try await h.run {
            h.gate.close()
            h.pipeline.record(h.learnedStep("stb-2"))
            await h.gate.waitUntilHeld("stb-2")
            await h.pipeline.flushed(device: "stb-1")
            #expect(h.pipeline.waitingBarriers == 0)
            #expect(h.pipeline.backlog == 1)
        }
    }

    @Test func aDeviceWaitsForTheBatchHoldingItsLastStep() async throws {
        let h = try RegistryHarness(fleets: [])
        try await h.run {
            h.gate.close()
            h.pipeline.record(h.learnedStep("stb-2"))
            await h.gate.waitUntilHeld("stb-2")
            // Queued behind the held batch: the device waits for it too, then for its own.
            h.pipeline.record(h.learnedStep("stb-1"))
            let done = SharedValue(false)
            let waiter = Task {
                await h.pipeline.flushed(device: "stb-1")
                done.value = true
            }
            await h.waitForBarrierOrEnd(done)
            #expect(!done.value)
            #expect(h.pipeline.waitingBarriers == 1)
            h.gate.open()
            await waiter.value
            #expect(h.pipeline.backlog == 0)
            #expect(h.pipeline.waitingBarriers == 0)
            // Stored when the wait ends: its poll is in the log.
            let polls = try await h.store.pollAttempts(device: "stb-1", sinceEpochMs: nil)
            #expect(polls.count == 1)
        }
    }
}
