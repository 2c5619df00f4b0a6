/// Which single sign-on methods an integration allows (the TVE Dashboard's "Enable Single Sign On" per platform,
/// sso.md §3.3); all on by default, as Roku documents.
package struct SSOPlatforms: Sendable, Hashable, Codable {
    /// Apple partner SSO from iOS and iPadOS.
    package var appleIos: Bool
    /// Apple partner SSO from tvOS.
    package var appleTvos: Bool
    /// Platform identity (`Adobe-Subject-Token`, `X-Roku-Reserved-Roku-Connect-Token`).
    package var platform: Bool
    /// Service token (`AD-Service-Token`).
    package var serviceToken: Bool

    /// Every method on unless switched off.
    package init(appleIos: Bool = true, appleTvos: Bool = true, platform: Bool = true, serviceToken: Bool = true) {
        self.appleIos = appleIos
        self.appleTvos = appleTvos
        self.platform = platform
        self.serviceToken = serviceToken
    }

    private enum CodingKeys: String, CodingKey {
        case appleIos, appleTvos, platform, serviceToken
    }

    /// Missing fields stay on.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.appleIos = try container.decodeIfPresent(Bool.self, forKey: .appleIos) ?? true
        self.appleTvos = try container.decodeIfPresent(Bool.self, forKey: .appleTvos) ?? true
        self.platform = try container.decodeIfPresent(Bool.self, forKey: .platform) ?? true
        self.serviceToken = try container.decodeIfPresent(Bool.self, forKey: .serviceToken) ?? true
    }

    /// Whether `method` is allowed.
    func allows(_ method: SSOMethod) -> Bool {
        switch method {
        case .platform: self.platform
        case .serviceToken: self.serviceToken
        }
    }
}
