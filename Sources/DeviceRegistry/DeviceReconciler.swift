import DeviceFleet
import Foundation
import RegcodeEngine
import RegcodeStore

/// A device the configuration (or a socket call) wants: its settings with secrets, scenario and fleet.
package struct WantedDevice: Sendable, Equatable {
    package var name: String
    package var settings: DeviceSettings
    package var scenario: Scenario
    package var fleet: String
    package var cycle: CyclePlan?
    /// Added over the socket rather than listed by the configuration.
    package var addedAtRuntime = false

    package init(name: String, settings: DeviceSettings, scenario: Scenario, fleet: String, cycle: CyclePlan?, addedAtRuntime: Bool = false) {
        self.name = name
        self.settings = settings
        self.scenario = scenario
        self.fleet = fleet
        self.cycle = cycle
        self.addedAtRuntime = addedAtRuntime
    }
}

/// What to do with one device so that the store and the fleet match what is wanted.
package enum DevicePlan: Sendable, Equatable {
    /// Store the record and start the device (new, or stored but not running). `save` is false when
    /// the stored record is already exactly this one.
    case start(StoredDevice, settings: DeviceSettings, cycle: CyclePlan?, save: Bool)
    /// Running with other settings or scenario: store the record and start it again.
    case restart(StoredDevice, settings: DeviceSettings, cycle: CyclePlan?)
    /// Running as wanted.
    case keep(String)
    /// No longer wanted: stop it and forget it.
    case remove(String)
}

/// Matches wanted devices with stored and running ones; pure, so start-up, reload, `devices.add`
/// and `devices.reset` decide the same way and tests check it with plain values.
///
/// A stored device keeps its identity (device id, seed) and state; a new one gets a fresh identity
/// from `identity`. Devices added over the socket stay unless removed over the socket.
package struct DeviceReconciler {
    /// A fresh device id and jitter seed for a device seen for the first time.
    package var identity: @Sendable (String) -> (deviceID: String, seed: UInt64) = { _ in
        (UUID().uuidString.lowercased(), UInt64.random(in: 1...UInt64.max))
    }

    /// - Parameter identity: how a device seen for the first time gets its id and seed (random by default).
    package init(identity: (@Sendable (String) -> (deviceID: String, seed: UInt64))? = nil) {
        if let identity { self.identity = identity }
    }

    /// The plan for the whole configuration: every wanted device, then the stored ones no longer wanted.
    /// - Parameters:
    ///   - stored: the store's devices (settings without secrets).
    ///   - running: the fleet's devices and their current settings and state (empty at start-up).
    ///   - runtimeSettings: settings of a device added over the socket, with its fleet's secrets restored.
    package func plan(
        wanted: [WantedDevice],
        stored: [StoredDevice],
        running: [String: (settings: DeviceSettings, snapshot: DeviceSnapshot)],
        runtimeSettings: (StoredDevice) -> (DeviceSettings, CyclePlan?)
    ) -> [DevicePlan] {
        var plans: [DevicePlan] = []
        plans.reserveCapacity(wanted.count)
        self.plan(wanted: wanted, stored: stored, running: running, runtimeSettings: runtimeSettings) { plans.append($0) }
        return plans
    }

    /// As ``plan(wanted:stored:running:runtimeSettings:)``, handing each plan to `body` as it is made: a plan holds a
    /// whole device record and its settings (~2 KB), and an array of 50,000 of them made start-up slow.
    package func plan(
        wanted: some Sequence<WantedDevice>,
        stored: [StoredDevice],
        running: [String: (settings: DeviceSettings, snapshot: DeviceSnapshot)],
        runtimeSettings: (StoredDevice) -> (DeviceSettings, CyclePlan?),
        _ body: (DevicePlan) throws -> Void
    ) rethrows {
        // Positions rather than copies of the records.
        var storedByName: [String: Int] = [:]
        storedByName.reserveCapacity(stored.count)
        for (position, device) in stored.enumerated() where storedByName[device.name] == nil {
            storedByName[device.name] = position
        }
        var wantedNames = Set<String>()
        wantedNames.reserveCapacity(stored.count)
        for device in wanted {
            wantedNames.insert(device.name)
            try body(plan(for: device, stored: storedByName[device.name].map { stored[$0] }, running: running[device.name]))
        }
        for device in stored where !wantedNames.contains(device.name) {
            if device.addedAtRuntime {
                if running[device.name] != nil {
                    try body(.keep(device.name))
                } else {
                    let (settings, cycle) = runtimeSettings(device)
                    try body(.start(device, settings: settings, cycle: cycle, save: false))
                }
            } else {
                try body(.remove(device.name))
            }
        }
    }

    /// The plan for one wanted device.
    package func plan(
        for wanted: WantedDevice,
        stored: StoredDevice?,
        running: (settings: DeviceSettings, snapshot: DeviceSnapshot)?
    ) -> DevicePlan {
        let record = self.record(for: wanted, existing: stored, snapshot: running?.snapshot)
        if let running {
            // The running device was given its stored emulated address (`spec`); the configuration names none.
            var wantedSettings = wanted.settings
            wantedSettings.clientAddress = record.clientAddress
            let unchanged =
                running.settings == wantedSettings && stored?.scenario == wanted.scenario
                && stored?.addedAtRuntime == wanted.addedAtRuntime
            return unchanged ? .keep(wanted.name) : .restart(record, settings: wanted.settings, cycle: wanted.cycle)
        }
        return .start(record, settings: wanted.settings, cycle: wanted.cycle, save: record != stored)
    }

    /// `devices.reset`: the same identity, nothing learned (credentials, tokens, code, profile).
    package func reset(_ device: StoredDevice, settings: DeviceSettings, cycle: CyclePlan?) -> DevicePlan {
        var record = device
        record.snapshot = DeviceSnapshot()
        record.tokens = []
        record.tvProvider = settings.tvProvider
        record.apps = Self.apps(settings, stored: []).map { app in
            var app = app
            let generation = device.apps.first { $0.app.id == app.app.id }?.app.identity.vendorGeneration ?? 0
            app.app.identity.vendorGeneration = generation
            return app
        }
        record.settings = Self.withoutSecrets(settings)
        return .restart(record, settings: settings, cycle: cycle)
    }

    /// The stored record of a wanted device: the stored identity and state (or the running state,
    /// which is newer), with the wanted settings (secrets stripped), scenario and fleet.
    package func record(for wanted: WantedDevice, existing: StoredDevice?, snapshot: DeviceSnapshot?) -> StoredDevice {
        var record =
            existing
            ?? {
                let fresh = identity(wanted.name)
                return StoredDevice(
                    name: wanted.name,
                    deviceID: fresh.deviceID,
                    settings: wanted.settings,
                    scenario: wanted.scenario,
                    seed: fresh.seed,
                    snapshot: DeviceSnapshot(),
                    fleet: wanted.fleet,
                    addedAtRuntime: wanted.addedAtRuntime
                )
            }()
        if let snapshot { record.snapshot = snapshot }
        record.apps = Self.apps(wanted.settings, stored: existing?.apps ?? [])
        // What the lab did to the TV Provider outlives a restart; configuring it away removes it.
        record.tvProvider = wanted.settings.tvProvider == nil ? nil : existing?.tvProvider ?? wanted.settings.tvProvider
        record.settings = Self.withoutSecrets(wanted.settings)
        record.scenario = wanted.scenario
        record.fleet = wanted.fleet
        record.addedAtRuntime = wanted.addedAtRuntime
        return record
    }

    /// The configured apps with what the store learned about each (vendor generation, state), matched
    /// by id; an app no longer configured is forgotten, a new one starts fresh.
    package static func apps(_ settings: DeviceSettings, stored: [StoredApp]) -> [StoredApp] {
        settings.apps.enumerated().map { position, app in
            let known = stored.first { $0.app.id == app.id }
            let hosted = app.hosted(defaultRequestor: settings.requestor, vendorGeneration: known?.app.identity.vendorGeneration ?? 0)
            return StoredApp(app: hosted, snapshot: position == 0 ? nil : known?.snapshot ?? DeviceSnapshot())
        }
    }

    /// Settings as the store holds them: secrets come from the configuration on every start.
    package static func withoutSecrets(_ settings: DeviceSettings) -> DeviceSettings {
        var settings = settings
        settings.softwareStatement = nil
        settings.signingKeys = nil
        return settings
    }
}
