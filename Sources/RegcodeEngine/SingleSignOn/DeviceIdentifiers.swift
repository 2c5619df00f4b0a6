import Crypto
import Foundation

/// The OS identifiers of one emulated device, all derived from its hardware secret.
///
/// Derivation instead of storage: the same secret gives the same MAC, IDFVs and AccessEnabler device
/// ids after any restart, and the secret itself never has to leave the device record (sso.md §3.1).
package struct DeviceIdentifiers: Sendable {
    private let hardwareSecret: [UInt8]
    package let platform: DevicePlatform

    /// `hardwareSecret`: the device's random bytes (32 in practice); never logged or exported.
    package init<Secret: Sequence<UInt8>>(hardwareSecret: Secret, platform: DevicePlatform) {
        self.hardwareSecret = Array(hardwareSecret)
        self.platform = platform
    }

    /// The Wi-Fi MAC: `02:` and five bytes of HMAC-SHA256(secret, "mac"), lowercase.
    /// INFERRED format: `02` marks a locally administered unicast address, so it is never a real vendor's.
    package var mac: String {
        let bytes = derive("mac").prefix(5)
        return (["02"] + bytes.map { hex($0) }).joined(separator: ":")
    }

    /// The bundle ID prefix iOS groups vendor ids by (APPLE, quoted by the tech note): all components but the
    /// last on iOS ≥ 7 (and tvOS), the first two on iOS 6 and earlier; a one-component id is used whole.
    package func bundlePrefix(of bundleId: String) -> String {
        let components = bundleId.split(separator: ".", omittingEmptySubsequences: false)
        guard components.count > 1 else { return bundleId }
        let kept = platform.isLegacyIOS ? components.prefix(2) : components.dropLast()
        return kept.joined(separator: ".")
    }

    /// What decides whether two apps share an IDFV.
    ///
    /// App Store: `teamId|bundlePrefix` — INFERRED union of Apple's rule (vendor = team) and the tech note's
    /// prefix rule; it gives exactly the seed's outcomes. Other sources: the bundle prefix alone (APPLE),
    /// so two teams with a common prefix then share an IDFV, the tech note's "may get different results".
    package func vendorKey(_ app: AppIdentity) -> String {
        let prefix = bundlePrefix(of: app.bundleId)
        return app.installSource == .appStore ? "\(app.teamId)|\(prefix)" : prefix
    }

    /// identifierForVendor: UUIDv5 in the namespace UUID(HMAC(secret, "idfv")) of `vendorKey#vendorGeneration`,
    /// so it changes only when the vendor's last app was uninstalled (generation bump).
    package func idfv(_ app: AppIdentity) -> UUID {
        NameBasedUUID.v5(
            namespace: NameBasedUUID.raw(derive("idfv")),
            name: "\(vendorKey(app))#\(app.vendorGeneration)"
        )
    }

    /// The id the AccessEnabler binds tokens to (and sends as v1 `deviceId`): hex SHA-256 of the MAC string
    /// on iOS ≤ 6, else of the IDFV's uppercase string (SEED: MAC vs IDFV by OS; the hash is INFERRED,
    /// the SDK's real algorithm is not public).
    package func aeDeviceId(_ app: AppIdentity) -> String {
        let source = platform.isLegacyIOS ? mac : idfv(app).uuidString
        return SHA256.hash(data: Array(source.utf8)).map { hex($0) }.joined()
    }

    private func derive(_ label: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(label.utf8), using: SymmetricKey(data: hardwareSecret)))
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
