#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The v2 profiles a completed code leaves per device and client.
extension SimulatorState {
    /// The unexpired profiles of a device for one client application, by MVPD.
    package func profiles(serviceProvider: String, deviceIdentifier: String, clientId: String) -> [String: SimulatedProfile] {
        let now = self.now
        self.sweepIfDue(now: now)
        self.observeV2Device(DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier), now: now)
        let key = self.profileKey(serviceProvider, deviceIdentifier, clientId)
        return (self.profiles[key] ?? [:]).filter { now < $0.value.notAfter }
    }

    /// Removes the device's profile for `mvpd` (v2 logout); returns whether one existed.
    @discardableResult
    package func removeProfile(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String) -> Bool {
        let key = self.profileKey(serviceProvider, deviceIdentifier, clientId)
        guard self.profiles[key]?.removeValue(forKey: mvpd) != nil else { return false }
        if self.profiles[key]?.isEmpty == true { self.profiles[key] = nil }
        return true
    }

    /// The device's profile for `mvpd`: valid, expired (kept a while after `notAfter`) or absent.
    func profileState(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String) -> AuthenticationState {
        let now = self.now
        self.sweepIfDue(now: now)
        self.observeV2Device(DeviceKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier), now: now)
        let key = self.profileKey(serviceProvider, deviceIdentifier, clientId)
        guard let profile = self.profiles[key]?[mvpd] else { return .absent }
        return now < profile.notAfter ? .valid(profile) : .expired(profile)
    }
}
