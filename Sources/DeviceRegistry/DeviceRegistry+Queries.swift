import DeviceEvents
import DeviceFleet
import RegcodeEngine
import RegcodeStore

/// One running device as `devices.list` shows it: its stored figures, live state and last outcome.
package struct DeviceView: Sendable {
    package var name: String
    package var summary: DeviceSummary?
    package var snapshot: DeviceSnapshot?
    package var lastOutcome: LastOutcome?
}

/// One running device as `devices.get` shows it.
package struct DeviceDetail: Sendable {
    package var view: DeviceView
    package var deviceID: String?
    package var settings: DeviceSettings
    package var snapshot: DeviceSnapshot
}

extension DeviceRegistry {
    /// `devices.list`: every running device, in the fleet's order.
    package nonisolated func summaries() async throws(DeviceRegistryError) -> [DeviceView] {
        let summaries: [DeviceSummary]
        do {
            summaries = try await store.deviceSummaries()
        } catch {
            throw .storeFailure(error)
        }
        let byName = Dictionary(summaries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var views: [DeviceView] = []
        for name in await fleet.deviceNames {
            views.append(
                DeviceView(name: name, summary: byName[name], snapshot: await fleet.snapshot(of: name), lastOutcome: liveStats.lastOutcome(of: name))
            )
        }
        return views
    }

    /// `devices.get`: one running device with its settings and identity.
    package nonisolated func detail(_ name: String) async throws(DeviceRegistryError) -> DeviceDetail {
        guard let snapshot = await fleet.snapshot(of: name), let settings = await fleet.settings(of: name) else {
            throw .unknownDevice(name)
        }
        let summary: DeviceSummary?
        let deviceID: String?
        do {
            summary = try await store.deviceSummary(named: name)
            deviceID = try await store.deviceID(named: name)
        } catch {
            throw .storeFailure(error)
        }
        return DeviceDetail(
            view: DeviceView(name: name, summary: summary, snapshot: snapshot, lastOutcome: liveStats.lastOutcome(of: name)),
            deviceID: deviceID,
            settings: settings,
            snapshot: snapshot
        )
    }
}
