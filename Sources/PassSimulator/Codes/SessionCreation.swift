#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a device gets when it asks for a new session (`POST /api/v2/{sp}/sessions`).
enum SessionCreation: Sendable {
    /// A new code was issued.
    case created(AuthenticationSession)
    /// The device already holds a valid profile for the requested MVPD, so no code is needed.
    case alreadyAuthenticated(SimulatedProfile)
    /// A valid SSO header reaches a profile for the requested MVPD (`authenticatedSSO`, sso.md §3.3).
    case authenticatedSSO(SimulatedProfile)
}
