/// The OS of an emulated device: which family and which version.
///
/// Both matter for single sign-on: iOS ≤ 6 derives the AccessEnabler device id from the MAC address and
/// shares one pasteboard between all apps; tvOS never had a shared pasteboard (sso.md §1.2, §3.1).
package struct DevicePlatform: Sendable, Hashable, Codable {
    package enum Family: String, Sendable, Hashable, Codable {
        case tvos
        case ios
    }

    package var family: Family
    package var osVersion: SemanticVersion

    package init(_ family: Family, _ osVersion: SemanticVersion) {
        self.family = family
        self.osVersion = osVersion
    }

    /// iOS before 7: MAC-based device id, shared pasteboard, the iOS 6 bundle-prefix rule (SEED).
    package var isLegacyIOS: Bool {
        family == .ios && osVersion < SemanticVersion(7)
    }
}
