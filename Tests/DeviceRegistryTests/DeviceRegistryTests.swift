import DeviceFleet
import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

@testable import DeviceRegistry

/// The registry's promise: a device's fleet entry and store row change together, after that device's queued steps
/// are stored; live figures follow; a device the fleet refuses leaves nothing behind.
@Suite struct DeviceRegistryTests {
    @Test func aResetWhileAStepOfTheDeviceIsQueuedKeepsTheFreshRecord() async throws {
        let h = try RegistryHarness(fleets: [RegistryHarness.fleet(count: 1)])
        try await h.run {
            _ = try await h.registry.start()
            // A step the device made before the reset (it registered) waits to be stored.
            h.gate.close()
            h.pipeline.record(h.learnedStep("stb-1"))
            await h.gate.waitUntilHeld("stb-1")
            let done = SharedValue(false)
            let reset = Task {
                try await h.registry.reset("stb-1")
                done.value = true
            }
            await h.waitForBarrierOrEnd(done)
            h.gate.open()
            try await reset.value
            await h.pipeline.flushed(device: "stb-1")
            let stored = try #require(try await h.storedRecord("stb-1"))
            #expect(stored.snapshot.credentials == nil, "the queued step overwrote the reset record")
            #expect(await h.fleet.snapshot(of: "stb-1")?.credentials == nil)
        }
    }

    @Test func aReloadForgetsTheFiguresOfTheDevicesItRemoves() async throws {
        let h = try RegistryHarness(fleets: [RegistryHarness.fleet(count: 2)])
        try await h.run {
            _ = try await h.registry.start()
            h.pipeline.record(h.learnedStep("stb-1"))
            h.pipeline.record(h.learnedStep("stb-2"))
            await h.pipeline.flushed(device: "stb-2")
            #expect(h.liveStats.lastOutcome(of: "stb-2") != nil)

            var catalog = h.registry.catalog
            catalog.fleets[0].count = 1
            let report = await h.registry.reload(catalog: catalog)
            #expect(report.failure == nil)
            #expect(report.removed == 1)
            #expect(h.liveStats.lastOutcome(of: "stb-2") == nil)
            #expect(h.liveStats.lastOutcome(of: "stb-1") != nil, "a device the reload keeps keeps its figures")
            #expect(await h.fleet.settings(of: "stb-2") == nil)
            #expect(try await h.storedRecord("stb-2") == nil)
        }
    }

    @Test func anAddTheFleetRefusesLeavesNoEntryRowOrAddress() async throws {
        let h = try RegistryHarness(fleets: [RegistryHarness.fleet(count: 1)])
        try await h.run {
            _ = try await h.registry.start()
            let range = "10.0.0.0/29"
            // The configured device holds the first address; an added one takes the next free one, 10.0.0.2.
            #expect(try await h.storedRecord("stb-1")?.clientAddress == "10.0.0.1")
            #expect(await h.registry.isAddressTaken("10.0.0.2", range: range) == false)
            // A stopping fleet takes no device.
            await h.fleet.stop()
            await #expect(throws: DeviceRegistryError.self) { try await h.registry.add(NewDevice(name: "extra")) }
            #expect(await h.fleet.settings(of: "extra") == nil)
            #expect(try await h.storedRecord("extra") == nil)
            #expect(await h.registry.isAddressTaken("10.0.0.2", range: range) == false)
            #expect(h.registry.fleetName(of: "extra") == nil)
            #expect(try await h.storedRecord("stb-1") != nil, "the other devices' rows stay")
        }
    }

    @Test func anAddedDeviceIsStoredRunningAndAddressed() async throws {
        let h = try RegistryHarness(fleets: [RegistryHarness.fleet(count: 1)])
        try await h.run {
            _ = try await h.registry.start()
            try await h.registry.add(NewDevice(name: "extra"))
            #expect(await h.fleet.settings(of: "extra") != nil)
            let stored = try #require(try await h.storedRecord("extra"))
            #expect(stored.addedAtRuntime && stored.clientAddress == "10.0.0.2")
            #expect(h.registry.fleetName(of: "extra") == "stb")
            await #expect(throws: DeviceRegistryError.self) { try await h.registry.add(NewDevice(name: "extra")) }
            try await h.registry.remove("extra")
            #expect(try await h.storedRecord("extra") == nil)
            #expect(h.registry.fleetName(of: "extra") == nil)
        }
    }

    @Test func aReinstallWaitsForItsOwnDevicesStepsOnly() async throws {
        let apps = [
            AppConfiguration(id: "watch", bundleId: "com.example.watch", teamId: "TEAM1"),
            AppConfiguration(id: "news", bundleId: "com.example.news", teamId: "TEAM1"),
        ]
        let h = try RegistryHarness(fleets: [RegistryHarness.fleet(count: 2, apps: apps)])
        try await h.run {
            _ = try await h.registry.start()
            await h.pipeline.flushed(device: "stb-1")
            await h.pipeline.flushed(device: "stb-2")
            // Another device's step waits to be stored: it does not hold the reinstall back.
            h.gate.close()
            h.pipeline.record(h.learnedStep("stb-2"))
            await h.gate.waitUntilHeld("stb-2")
            let first = try await h.registry.reinstall(device: "stb-1", app: "watch")
            #expect(first.reinstalled.map(\.app) == ["watch", "news"])
            #expect(try await h.storedRecord("stb-2")?.snapshot.credentials == nil, "the other device's step is still not stored")

            // Its own queued step does: the reinstall waits for it, and its record wins.
            h.pipeline.record(h.learnedStep("stb-1"))
            let done = SharedValue(false)
            let second = Task {
                let report = try await h.registry.reinstall(device: "stb-1", app: "watch")
                done.value = true
                return report
            }
            await h.waitForBarrierOrEnd(done)
            #expect(!done.value, "the reinstall went on before the device's queued step was stored")
            h.gate.open()
            let report = try await second.value
            #expect(report.reinstalled.first?.vendorGeneration == 2)
            await h.pipeline.flushed(device: "stb-1")
            let stored = try #require(try await h.storedRecord("stb-1"))
            #expect(stored.snapshot.credentials == nil, "the queued step overwrote the reinstalled record")
            #expect(stored.apps.map(\.app.identity.vendorGeneration) == [2, 2])
        }
    }
}
