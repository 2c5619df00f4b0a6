import RegcodeEngine

extension Fleet {
    /// A device to add: its settings, stable id, stored state and scenario.
    package struct DeviceSpec: Sendable {
        package var settings: DeviceSettings
        package var deviceID: String
        /// The first app's stored state.
        package var snapshot: DeviceSnapshot
        package var scenario: Scenario
        package var seed: UInt64
        /// Timing of the `cycle` scenario (defaults when nil).
        package var cycle: CyclePlan?
        /// Single sign-on: the device's platform and storage settings; nil for a plain one-app device.
        package var sso: DeviceSSOSettings?
        /// The first app, when the device hosts apps (``sso`` set).
        package var firstApp: HostedApp?
        /// The device's other apps.
        package var otherApps: [AppSpec] = []
        /// The device's stored shared tokens.
        package var tokens: [SharedToken] = []
        /// The device's TV Provider as stored (or configured); nil: not emulated.
        package var tvProvider: TVProviderDevice?

        package init(
            settings: DeviceSettings,
            deviceID: String,
            snapshot: DeviceSnapshot = DeviceSnapshot(),
            scenario: Scenario = .login,
            seed: UInt64,
            cycle: CyclePlan? = nil
        ) {
            self.settings = settings
            self.deviceID = deviceID
            self.snapshot = snapshot
            self.scenario = scenario
            self.seed = seed
            self.cycle = cycle
        }

        /// The host of the device's shared storage, when it hosts apps.
        func makeSSOHost() -> SSOHost? {
            guard let sso, let firstApp else { return nil }
            return SSOHost(
                settings: sso,
                apps: [firstApp] + otherApps.map(\.app),
                storedDeviceID: deviceID,
                tokens: tokens,
                heldProfiles: [snapshot.profile] + otherApps.map(\.snapshot.profile)
            )
        }
    }

    /// An app beyond a device's first: who it is, its stored state, and its own DCR software statement.
    package struct AppSpec: Sendable {
        package var app: HostedApp
        package var snapshot: DeviceSnapshot
        /// The app's software statement (secret); nil uses the device's.
        package var softwareStatement: String?
        package init(app: HostedApp, snapshot: DeviceSnapshot = DeviceSnapshot(), softwareStatement: String? = nil) {
            self.app = app
            self.snapshot = snapshot
            self.softwareStatement = softwareStatement
        }
    }
}
