/// The REST v2 single sign-on identities an app presents on its calls (sso.md §3.3): a platform
/// identity (`Adobe-Subject-Token`, as Amazon and Roku devices send) and a service token
/// (`AD-Service-Token`). Who the user is, not the token: the client obtains tokens for these users.
package struct SSOIdentitySettings: Sendable, Equatable, Codable {
    /// The platform user (`sub`) whose platform identity token the device sends; nil: none.
    package var platformUser: String?
    /// Send the platform identity as Roku's `X-Roku-Reserved-Roku-Connect-Token` instead.
    package var rokuHeader: Bool
    /// The user (`sub`) whose service token the app sends; nil: none.
    package var serviceUser: String?

    package init(platformUser: String? = nil, rokuHeader: Bool = false, serviceUser: String? = nil) {
        self.platformUser = platformUser
        self.rokuHeader = rokuHeader
        self.serviceUser = serviceUser
    }

    package var isEmpty: Bool { platformUser == nil && serviceUser == nil }
}
