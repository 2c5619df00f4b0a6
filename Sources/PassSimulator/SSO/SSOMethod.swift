/// The header-based single sign-on methods of REST v2 (sso.md §2.2, §2.3); partner (Apple) SSO is device-bound and
/// has no subject.
package enum SSOMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// `Adobe-Subject-Token` or `X-Roku-Reserved-Roku-Connect-Token`; profiles of type `platformSSO`.
    case platform
    /// `AD-Service-Token`; profiles of type `serviceTokenSSO`.
    case serviceToken

    /// The profile `type` an SSO profile found through this method carries.
    var profileType: ProfileType {
        switch self {
        case .platform: .platformSSO
        case .serviceToken: .serviceTokenSSO
        }
    }
}
