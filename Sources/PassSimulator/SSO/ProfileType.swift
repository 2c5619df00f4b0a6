/// A v2 profile's `type` (sso.md §2.5).
package enum ProfileType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Basic authentication (a code completed on a second screen).
    case regular
    /// Created from Apple's SAML answer (`POST profiles/sso/Apple`); issuer `Apple`.
    case appleSSO
    /// Found through a platform identity header; issuer is the MVPD.
    case platformSSO
    /// Found through a service token header; issuer is the MVPD.
    case serviceTokenSSO
    /// Issued by Adobe for a degraded MVPD; issuer `Adobe`.
    case degraded
    /// Issued by Adobe for a TempPass MVPD (never stored: derived from the TempPass trial); issuer `Adobe`.
    case temporary

    /// The profile's `issuer` for a profile of `mvpd`.
    func issuer(mvpd: String) -> String {
        switch self {
        case .regular, .platformSSO, .serviceTokenSSO: mvpd
        case .appleSSO: "Apple"
        case .degraded, .temporary: "Adobe"
        }
    }
}
