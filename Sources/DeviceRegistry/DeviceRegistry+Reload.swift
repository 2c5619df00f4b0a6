import DeviceFleet
import RegcodeEngine
import RegcodeStore

/// What a reload changed, and why it stopped early if it did.
package struct ReloadReport: Sendable {
    package var added = 0
    package var removed = 0
    package var changed = 0
    /// The error that left the reload partly applied; nil when it applied whole.
    package var failure: DeviceRegistryError?
}

extension DeviceRegistry {
    /// SIGHUP: takes the new catalog and applies the fleet changes device by device: devices added, removed (their
    /// live figures forgotten) or restarted with new settings, without disturbing the others.
    package func reload(catalog newCatalog: DeviceCatalog) async -> ReloadReport {
        replaceCatalog(newCatalog)
        var report = ReloadReport()
        var running: [String: (settings: DeviceSettings, snapshot: DeviceSnapshot)] = [:]
        for name in await fleet.deviceNames {
            if let settings = await fleet.settings(of: name), let snapshot = await fleet.snapshot(of: name) {
                running[name] = (settings, snapshot)
            }
        }
        let stored: [StoredDevice]
        do {
            stored = try await store.loadDevices()
        } catch {
            report.failure = .storeFailure(error)
            return report
        }
        let storedByName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let plans = DeviceReconciler().plan(
            wanted: Array(wantedDevices(newCatalog)),
            stored: stored,
            running: running,
            runtimeSettings: runtimeSettingsAndCycle
        )
        do throws(DeviceRegistryError) {
            for plan in plans {
                switch plan {
                case .start(let planned, let settings, let cycle, let save):
                    let device = try addressed(planned)
                    var change = DeviceChange(name: device.name, start: device.spec(settings: settings, cycle: cycle))
                    if save || device.clientAddress != planned.clientAddress { change.row = .save(device) }
                    change.previous = storedByName[device.name]
                    if device.clientAddress != planned.clientAddress { change.takenAddress = device.clientAddress }
                    try await self.change([change])
                    report.added += 1
                case .restart(let planned, let settings, let cycle):
                    let device = try addressed(planned)
                    var change = DeviceChange(name: device.name, row: .save(device), start: device.spec(settings: settings, cycle: cycle))
                    change.previous = storedByName[device.name]
                    if device.clientAddress != planned.clientAddress { change.takenAddress = device.clientAddress }
                    try await self.change([change])
                    report.changed += 1
                case .keep:
                    continue
                case .remove(let name):
                    try await self.change([DeviceChange(name: name, row: .remove, forgetStats: true)])
                    if running[name] != nil { report.removed += 1 }
                }
            }
        } catch {
            report.failure = error
        }
        return report
    }
}
