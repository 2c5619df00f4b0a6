import DeviceFleet
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeStore

/// A device to add over the socket: a configured fleet's settings with these overrides.
package struct NewDevice: Sendable {
    package var name: String
    /// The fleet whose settings it takes; nil: the first configured.
    package var fleet: String?
    package var requestor: String?
    package var mvpd: String?
    package var profile: APIProfile?
    package var persona: DevicePersona?
    /// `adobe-pass` or `oauth-device` (the fleet's `oauth:` client and endpoints).
    package var deviceProtocol: DeviceProtocol?
    package var scenario: Scenario?
    /// The login scenario's provider and TempPass identity, both replacing the fleet's when given.
    package var login: (provider: LoginProvider, tempPassEmail: String?)?

    package init(name: String) {
        self.name = name
    }
}

/// What `apps.reinstall` did: the vendor's apps with their new vendor generation and device id.
package struct ReinstallReport: Sendable {
    package struct App: Sendable {
        package var app: String
        package var vendorGeneration: Int
        package var deviceID: String
        package var previousDeviceID: String
    }

    package var vendorKey: String
    package var reinstalled: [App]
}

extension DeviceRegistry {
    /// `devices.add`: a new device with a fresh identity, stored and started; refused when the name is taken or its
    /// fleet has no client address left. A device the fleet refuses leaves nothing behind.
    package func add(_ new: NewDevice) async throws(DeviceRegistryError) {
        let catalog = self.catalog
        guard let template = new.fleet.map({ catalog.fleet(named: $0) }) ?? catalog.fleets.first else {
            throw .unknownFleet(new.fleet ?? "", known: catalog.fleets.map(\.name))
        }
        var fleet = template
        if let requestor = new.requestor { fleet.requestor = requestor }
        if let mvpd = new.mvpd { fleet.mvpd = mvpd }
        if let profile = new.profile { fleet.profile = profile }
        if let persona = new.persona { fleet.persona = persona }
        if let deviceProtocol = new.deviceProtocol { fleet.deviceProtocol = deviceProtocol }
        if let scenario = new.scenario { fleet.scenario = scenario }
        if let login = new.login { (fleet.loginProvider, fleet.tempPassEmail) = login }
        if await self.fleet.settings(of: new.name) != nil { throw .duplicateDevice(new.name) }
        let wanted = WantedDevice(
            name: new.name,
            settings: catalog.settings(for: new.name, fleet: fleet),
            scenario: fleet.scenario,
            fleet: template.name,
            cycle: fleet.cycle,
            addedAtRuntime: true
        )
        guard case .start(let planned, let settings, let cycle, _) = DeviceReconciler().plan(for: wanted, stored: nil, running: nil) else {
            throw .inconsistent("a new device must be started")
        }
        let device = try addressed(planned)
        var change = DeviceChange(name: new.name, stop: false, row: .save(device), start: device.spec(settings: settings, cycle: cycle))
        change.takenAddress = device.clientAddress == planned.clientAddress ? nil : device.clientAddress
        change.addedFleet = template.name
        try await self.change([change])
    }

    /// `devices.remove`: the device stops, its queued steps are stored, then its row and live figures go.
    package func remove(_ name: String) async throws(DeviceRegistryError) {
        guard await fleet.settings(of: name) != nil else { throw .unknownDevice(name) }
        try await change([DeviceChange(name: name, row: .remove, forgetStats: true)])
        setAddedFleet(nil, of: name)
    }

    /// `devices.reset`: the device forgets everything it learned (credentials, tokens, code, profile) but keeps its
    /// identity, then starts its scenario again. Steps it queued before are stored first: the fresh record wins.
    package func reset(_ name: String) async throws(DeviceRegistryError) {
        guard let settings = await fleet.settings(of: name) else { throw .unknownDevice(name) }
        let rebuild: @Sendable (StoredDevice) throws(DeviceRegistryError) -> (StoredDevice, Spec) = { [self] stored throws(DeviceRegistryError) in
            guard
                case .restart(let record, let settings, let cycle) = DeviceReconciler().reset(
                    stored,
                    settings: settings,
                    cycle: self.cycle(of: stored)
                )
            else {
                throw .inconsistent("a reset must restart the device")
            }
            return (record, record.spec(settings: settings, cycle: cycle))
        }
        try await change([DeviceChange(name: name, row: .rebuild(rebuild), forgetStats: true)])
    }

    /// `apps.reinstall`: every app of the app's vendor is uninstalled and installed again (``SSOHost/reinstallVendor(of:)``),
    /// on the record as the device's queued steps left it; the shared token storage is the running device's.
    package func reinstall(device name: String, app appID: String) async throws(DeviceRegistryError) -> ReinstallReport {
        guard let settings = await fleet.settings(of: name), let running = await fleet.apps(of: name) else {
            throw .unknownDevice(name)
        }
        guard running.contains(where: { $0.id == appID }) else { throw .unknownApp(device: name, app: appID) }
        guard running.first?.identity != nil else { throw .noVendor(name) }
        // The storage as the running device has it: newer than the store until the pipeline catches up.
        let tokens: [SharedToken]
        do {
            tokens = try await fleet.tokens(of: name)
        } catch {
            throw DeviceRegistryError(error)
        }
        let report = SharedValue<ReinstallReport?>(nil)
        let rebuild: @Sendable (StoredDevice) throws(DeviceRegistryError) -> (StoredDevice, Spec) = { [self] stored throws(DeviceRegistryError) in
            let (record, result) = try Self.reinstalled(stored, app: appID, settings: settings, tokens: tokens)
            report.value = result
            return (record, record.spec(settings: settings, cycle: self.cycle(of: record)))
        }
        try await change([DeviceChange(name: name, row: .rebuild(rebuild))])
        guard let result = report.value else { throw .inconsistent("the reinstall of '\(name)' made no record") }
        return result
    }

    /// The record after the vendor of `appID` is reinstalled: the vendor's apps get the next vendor generation and,
    /// with it, a new device id; what they learned is gone (the first app's state is the device's).
    static func reinstalled(
        _ stored: StoredDevice,
        app appID: String,
        settings: DeviceSettings,
        tokens: [SharedToken]
    ) throws(DeviceRegistryError) -> (StoredDevice, ReinstallReport) {
        var record = stored
        guard !record.apps.isEmpty, let index = record.apps.firstIndex(where: { $0.app.id == appID }) else {
            throw .inconsistent("the stored record of '\(stored.name)' does not list app '\(appID)'")
        }
        var host = SSOHost(
            settings: settings.sso ?? DeviceSSOSettings(),
            apps: record.apps.map(\.app),
            storedDeviceID: record.deviceID,
            tokens: tokens,
            heldProfiles: []
        )
        let before = record.apps.indices.map { host.deviceID(of: $0) }
        host.reinstallVendor(of: index)
        var reinstalled: [ReinstallReport.App] = []
        for position in record.apps.indices
        where host.apps[position].identity.vendorGeneration != record.apps[position].app.identity.vendorGeneration {
            record.apps[position].app.identity.vendorGeneration = host.apps[position].identity.vendorGeneration
            if position == 0 {
                record.snapshot = DeviceSnapshot()
            } else {
                record.apps[position].snapshot = DeviceSnapshot()
            }
            reinstalled.append(
                .init(
                    app: record.apps[position].app.id,
                    vendorGeneration: host.apps[position].identity.vendorGeneration,
                    deviceID: host.deviceID(of: position),
                    previousDeviceID: before[position]
                )
            )
        }
        record.tokens = tokens
        return (record, ReinstallReport(vendorKey: host.vendorKey(of: index), reinstalled: reinstalled))
    }
}
