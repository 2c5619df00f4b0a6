import DeviceFleet
import RegcodeEngine
import RegcodeStore
import Testing

@testable import DeviceRegistry
@testable import RegcodeDaemon

/// One pure decision for start-up, reload, `devices.add` and `devices.reset`.
@Suite struct DeviceReconcilerTests {
    let reconciler = DeviceReconciler(identity: { name in ("id-\(name)", 42) })

    static func wanted(_ name: String, requestor: String = "REF30", scenario: Scenario = .login) -> WantedDevice {
        var settings = DeviceSettings(name: name, requestor: requestor)
        settings.softwareStatement = "secret statement"
        return WantedDevice(name: name, settings: settings, scenario: scenario, fleet: "stb", cycle: nil)
    }

    static func stored(_ name: String, requestor: String = "REF30", runtime: Bool = false) -> StoredDevice {
        var snapshot = DeviceSnapshot()
        snapshot.credentials = ClientCredentials(clientID: "c-\(name)", clientSecret: "s")
        return StoredDevice(
            name: name,
            deviceID: "stored-\(name)",
            settings: DeviceSettings(name: name, requestor: requestor),
            scenario: .login,
            seed: 7,
            snapshot: snapshot,
            fleet: "stb",
            addedAtRuntime: runtime
        )
    }

    static func noRuntime(_ device: StoredDevice) -> (DeviceSettings, CyclePlan?) { (device.settings, nil) }

    @Test func aNewDeviceGetsAFreshIdentityAndIsStoredWithoutSecrets() {
        let plans = reconciler.plan(wanted: [Self.wanted("stb-1")], stored: [], running: [:], runtimeSettings: Self.noRuntime)
        guard case .start(let record, let settings, _, let save) = plans.first else {
            Issue.record("expected a start, got \(plans)")
            return
        }
        #expect(plans.count == 1)
        #expect(save)
        #expect(record.deviceID == "id-stb-1" && record.seed == 42)
        #expect(record.settings.softwareStatement == nil)
        #expect(settings.softwareStatement == "secret statement")
    }

    @Test func aStoredDeviceKeepsItsIdentityAndStateAndIsSavedOnlyWhenItsRecordChanged() {
        let same = reconciler.plan(wanted: [Self.wanted("stb-1")], stored: [Self.stored("stb-1")], running: [:], runtimeSettings: Self.noRuntime)
        guard case .start(let record, _, _, let save) = same.first else {
            Issue.record("expected a start, got \(same)")
            return
        }
        #expect(!save)
        #expect(record == Self.stored("stb-1"))
        let moved = reconciler.plan(
            wanted: [Self.wanted("stb-1", requestor: "OTHER")],
            stored: [Self.stored("stb-1")],
            running: [:],
            runtimeSettings: Self.noRuntime
        )
        guard case .start(let changed, _, _, true) = moved.first else {
            Issue.record("expected a saved start, got \(moved)")
            return
        }
        #expect(changed.deviceID == "stored-stb-1")
        #expect(changed.snapshot.credentials?.clientID == "c-stb-1")
        #expect(changed.settings.requestor == "OTHER")
    }

    @Test func aRunningDeviceIsKeptWhenUnchangedAndRestartedWithItsLiveStateWhenChanged() {
        let wanted = Self.wanted("stb-1")
        var live = DeviceSnapshot()
        live.selectedMVPD = "Cablevision"
        let kept = reconciler.plan(
            wanted: [wanted],
            stored: [Self.stored("stb-1")],
            running: ["stb-1": (wanted.settings, live)],
            runtimeSettings: Self.noRuntime
        )
        #expect(kept == [.keep("stb-1")])
        let changed = reconciler.plan(
            wanted: [Self.wanted("stb-1", requestor: "OTHER")],
            stored: [Self.stored("stb-1")],
            running: ["stb-1": (wanted.settings, live)],
            runtimeSettings: Self.noRuntime
        )
        guard case .restart(let record, _, _) = changed.first else {
            Issue.record("expected a restart, got \(changed)")
            return
        }
        #expect(record.snapshot == live)
        #expect(record.deviceID == "stored-stb-1")
    }

    @Test func aRunningDeviceWithItsStoredAddressIsKeptOnReload() {
        var stored = Self.stored("stb-1")
        stored.clientAddress = "198.18.0.7"
        let wanted = Self.wanted("stb-1")
        // What the fleet runs: the configured settings plus the stored address.
        var running = wanted.settings
        running.clientAddress = "198.18.0.7"
        let plans = reconciler.plan(
            wanted: [wanted],
            stored: [stored],
            running: ["stb-1": (running, stored.snapshot)],
            runtimeSettings: Self.noRuntime
        )
        #expect(plans == [.keep("stb-1")])
        // A changed setting still restarts it, keeping its address.
        var changed = Self.wanted("stb-1", requestor: "OTHER")
        changed.fleet = "stb"
        let restart = reconciler.plan(
            wanted: [changed],
            stored: [stored],
            running: ["stb-1": (running, stored.snapshot)],
            runtimeSettings: Self.noRuntime
        )
        guard case .restart(let record, _, _)? = restart.first else {
            Issue.record("expected a restart, got \(restart)")
            return
        }
        #expect(record.clientAddress == "198.18.0.7")
    }

    @Test func storedDevicesNoLongerWantedAreRemovedUnlessAddedOverTheSocket() {
        let runtime = Self.stored("lab-1", runtime: true)
        let atStart = reconciler.plan(
            wanted: [],
            stored: [Self.stored("stb-9"), runtime],
            running: [:],
            runtimeSettings: Self.noRuntime
        )
        #expect(atStart == [.remove("stb-9"), .start(runtime, settings: runtime.settings, cycle: nil, save: false)])
        let onReload = reconciler.plan(
            wanted: [],
            stored: [runtime],
            running: ["lab-1": (runtime.settings, runtime.snapshot)],
            runtimeSettings: Self.noRuntime
        )
        #expect(onReload == [.keep("lab-1")])
    }

    @Test func aResetKeepsTheIdentityAndForgetsWhatTheDeviceLearned() {
        let device = Self.stored("stb-1")
        let plan = reconciler.reset(device, settings: Self.wanted("stb-1").settings, cycle: nil)
        guard case .restart(let record, let settings, _) = plan else {
            Issue.record("expected a restart, got \(plan)")
            return
        }
        #expect(record.deviceID == device.deviceID && record.seed == device.seed)
        #expect(record.snapshot == DeviceSnapshot())
        #expect(settings.softwareStatement == "secret statement")
        #expect(record.settings.softwareStatement == nil)
    }
}
