import DeviceFleet
import RegcodeEngine
import RegcodeStore

extension StoredDevice {
    /// What the fleet runs for this device; `settings` carries the secrets the store never holds.
    func spec(settings: DeviceSettings, cycle: CyclePlan?) -> Fleet<SystemDeviceClock>.DeviceSpec {
        var settings = settings
        settings.clientAddress = clientAddress
        return .init(settings: settings, deviceID: deviceID, snapshot: snapshot, scenario: scenario, seed: seed, cycle: cycle)
    }
}
