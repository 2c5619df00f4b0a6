#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The v1 AuthZ token of a resource at a given time.
enum AuthorizationState: Sendable, Equatable {
    /// No valid AuthN token.
    case notAuthenticated
    /// Never authorized (or logged out).
    case absent
    case expired(AuthorizationGrant)
    case valid(AuthorizationGrant)
}
