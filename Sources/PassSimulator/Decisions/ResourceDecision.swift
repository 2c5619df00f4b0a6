#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One resource's authorization answer.
struct ResourceDecision: Sendable {
    enum Outcome: Sendable {
        case permit
        /// The MVPD's deny list, with its `details` text.
        case deniedByMVPD(String)
        /// Another item error: home-based policies, parental controls, `network_*`, …
        case error(EnhancedError)
    }

    let resource: String
    let outcome: Outcome

    /// The deny list's `details` when the MVPD denied the resource.
    var denial: String? {
        if case .deniedByMVPD(let details) = self.outcome { return details }
        return nil
    }

    var isPermitted: Bool {
        if case .permit = self.outcome { return true }
        return false
    }
}
