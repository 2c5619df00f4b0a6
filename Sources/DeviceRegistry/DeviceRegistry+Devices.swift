import DeviceFleet
import RegcodeEngine
import RegcodeRecords
import RegcodeStore

/// The control surface's reads and writes of one device, all through the registry: the control layer holds no
/// fleet and no store, so a device is changed in one place and a lab's change is stored where it is made.
extension DeviceRegistry {
    /// Applies an AccessEnabler call to one app of a device (nil: its first).
    package nonisolated func call(_ command: DeviceCommand, device: String, app: String? = nil) async throws(DeviceRegistryError) {
        do {
            try await fleet.send(command, to: device, app: app)
        } catch {
            throw DeviceRegistryError(error)
        }
    }

    /// The settings an app of a device runs with (nil: its first app).
    package nonisolated func settings(of device: String, app: String?) async throws(DeviceRegistryError) -> DeviceSettings {
        do {
            return try await fleet.settings(of: device, app: app)
        } catch {
            throw DeviceRegistryError(error)
        }
    }

    /// The phase an app of a device is in now; nil when the device is gone.
    package nonisolated func phase(of device: String, app: String?) async -> DevicePhase? {
        await fleet.snapshot(of: device, app: app)?.phase
    }

    /// A device's apps as they run.
    package nonisolated func apps(of device: String) async throws(DeviceRegistryError) -> [Fleet.AppStatus] {
        guard let apps = await fleet.apps(of: device) else { throw .unknownDevice(device) }
        return apps
    }

    /// Why an app of a device is (not) signed in through single sign-on; nil for a device of one plain app.
    package nonisolated func explain(device: String, app: String?) async throws(DeviceRegistryError) -> SSOExplanation? {
        do {
            return try await fleet.explain(device: device, app: app)
        } catch {
            throw DeviceRegistryError(error)
        }
    }

    /// What a device's shared token storage holds.
    package nonisolated func tokens(of device: String) async throws(DeviceRegistryError) -> [SharedToken] {
        do {
            return try await fleet.tokens(of: device)
        } catch {
            throw DeviceRegistryError(error)
        }
    }

    /// A device's latest logged polls, newest first.
    package nonisolated func recentPolls(of device: String, limit: Int) async throws(DeviceRegistryError) -> [PollAttempt] {
        guard await fleet.settings(of: device) != nil else { throw .unknownDevice(device) }
        do {
            return try await store.recentPolls(of: device, limit: limit)
        } catch {
            throw .storeFailure(error)
        }
    }

    // MARK: TV Provider

    /// A device's TV Provider (Apple single sign-on) as the lab left it.
    package nonisolated func tvProvider(of device: String) async throws(DeviceRegistryError) -> TVProviderDevice {
        let state: TVProviderDevice?
        do {
            state = try await fleet.tvProvider(of: device)
        } catch {
            throw DeviceRegistryError(error)
        }
        guard let state else { throw .noTVProvider(device) }
        return state
    }

    /// Changes a device's TV Provider and stores it, so a restarted daemon finds it as the lab left it.
    package nonisolated func updateTVProvider(
        of device: String,
        _ change: @Sendable (inout TVProviderDevice) -> Void
    ) async throws(DeviceRegistryError) -> TVProviderDevice {
        let state: TVProviderDevice
        do {
            state = try await fleet.updateTVProvider(of: device, change)
        } catch {
            throw DeviceRegistryError(error)
        }
        try await saveTVProvider(state, device: device)
        return state
    }

    /// Answers the TV Provider picker open in an app; picking a provider may sign the system account in, so the
    /// device's TV Provider is stored after.
    package nonisolated func selectTVProvider(_ choice: TVProviderChoice, device: String, app: String?) async throws(DeviceRegistryError) {
        let state: TVProviderDevice?
        do {
            try await fleet.selectTVProvider(choice, device: device, app: app)
            state = try await fleet.tvProvider(of: device)
        } catch {
            throw DeviceRegistryError(error)
        }
        try await saveTVProvider(state, device: device)
    }

    private nonisolated func saveTVProvider(_ state: TVProviderDevice?, device: String) async throws(DeviceRegistryError) {
        do {
            try await store.saveTVProvider(state, device: device)
        } catch {
            throw .storeFailure(error)
        }
    }

    // MARK: The whole fleet

    /// How many devices run.
    package nonisolated var deviceCount: Int {
        get async { await fleet.count }
    }

    /// How many devices are in each phase.
    package nonisolated func phaseCounts() async -> [DevicePhase: Int] {
        await fleet.phaseCounts()
    }

    /// Devices by phase, by fleet (devices of no fleet under `noFleet`).
    package nonisolated func phaseCountsByFleet(noFleet: String) async -> [String: [DevicePhase: Int]] {
        await fleet.phaseCounts { [self] name in fleetName(of: name) ?? noFleet }
    }

    /// Backend calls running or waiting for a slot.
    package nonisolated var requestsOutstanding: Int {
        get async { await fleet.requestsOutstanding }
    }

    /// What the fleet defers while storage fails.
    package nonisolated var holdTotals: HoldTotals {
        get async { await fleet.holdTotals }
    }
}
