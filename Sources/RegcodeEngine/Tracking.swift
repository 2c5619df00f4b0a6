import AccessEnablerAPI
import Crypto
import Foundation

/// The string arrays of `sendTrackingData`, as iOS fills them (reference §6).
enum Tracking {
    /// Device type, client type and OS, as every tracking array ends with them.
    static func deviceFields(_ settings: DeviceSettings) -> [String] {
        ["unknown", "ios", settings.deviceInfo.osName]
    }

    /// `authenticationDetection` of an authenticated device: `[YES, mvpd, guid, cached, …device]`.
    static func authentication(_ profile: AuthProfile, cached: Bool, settings: DeviceSettings) -> [String] {
        [
            AccessEnabler.trackingYes, profile.mvpd, guid(profile) ?? AccessEnabler.trackingNone,
            cached ? AccessEnabler.trackingYes : AccessEnabler.trackingNo,
        ] + deviceFields(settings)
    }

    /// `authenticationDetection` of a device that is not authenticated.
    static func notAuthenticated(_ settings: DeviceSettings) -> [String] {
        let none = AccessEnabler.trackingNone
        return [AccessEnabler.trackingNo, none, none, none] + deviceFields(settings)
    }

    /// `authorizationDetection`: `[success, mvpd, guid, cached, error, details, …device]`.
    static func authorization(
        success: Bool,
        mvpd: String,
        profile: AuthProfile?,
        error: String,
        details: String,
        settings: DeviceSettings
    ) -> [String] {
        [
            success ? AccessEnabler.trackingYes : AccessEnabler.trackingNo,
            mvpd.isEmpty ? AccessEnabler.trackingNone : mvpd,
            profile.flatMap(guid) ?? AccessEnabler.trackingNone,
            // Media tokens are never cached: every authorization asks the backend.
            AccessEnabler.trackingNo,
            error,
            details.isEmpty ? AccessEnabler.trackingNone : details,
        ] + deviceFields(settings)
    }

    /// The tracking GUID: the MD5 of the user id, as AccessEnabler hashes it.
    static func guid(_ profile: AuthProfile) -> String? {
        profile.userID.map { Insecure.MD5.hash(data: Data($0.utf8)).map { String(format: "%02x", $0) }.joined() }
    }
}
