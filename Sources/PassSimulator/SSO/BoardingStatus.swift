/// Whether a streaming platform onboarded the MVPD for its single sign-on (`boardingStatus`, reference sso.md §2.5).
package enum BoardingStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Full partner SSO: the platform authenticates the user and Adobe exchanges its SAML answer for a profile.
    case supported = "SUPPORTED"
    /// Only listed in the platform's picker; authentication continues with the basic (code) flow.
    case picker = "PICKER"
}
