import DeviceFleet
import RegcodeEngine
import RegcodeStore

extension StoredDevice {
    /// What the fleet runs for this device; `settings` carries the secrets the store never holds.
    package func spec(settings: DeviceSettings, cycle: CyclePlan?) -> Fleet.DeviceSpec {
        var settings = settings
        settings.clientAddress = clientAddress
        var spec = Fleet.DeviceSpec(
            settings: settings,
            deviceID: deviceID,
            snapshot: snapshot,
            scenario: scenario,
            seed: seed,
            cycle: cycle
        )
        spec.tvProvider = tvProvider
        // The stored account carries no key: the identity provider is the daemon's.
        spec.tvProvider?.identityProvider = settings.tvProvider?.identityProvider
        guard !apps.isEmpty else { return spec }
        spec.sso = settings.sso ?? DeviceSSOSettings()
        spec.firstApp = apps[0].app
        spec.otherApps = apps.dropFirst().map { Fleet.AppSpec(app: $0.app, snapshot: $0.snapshot ?? DeviceSnapshot()) }
        spec.tokens = tokens
        return spec
    }
}
