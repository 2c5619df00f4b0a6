#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One resource's authorization answer.
struct ResourceDecision: Sendable, Equatable {
    let resource: String
    /// The MVPD's `details` text when denied, `nil` when authorized.
    let denial: String?
}
