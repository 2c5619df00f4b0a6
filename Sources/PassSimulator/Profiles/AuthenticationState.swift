#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state of an authentication (a v2 profile or a v1 AuthN token) at a given time.
enum AuthenticationState: Sendable, Equatable {
    /// Never authenticated, logged out, or purged long after expiry.
    case absent
    /// Past its `notAfter`.
    case expired(SimulatedProfile)
    /// Usable.
    case valid(SimulatedProfile)
}
