#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Authorization decisions and the deny lists behind them.
extension SimulatorState {
    /// Decides each resource for a user of `mvpd` against the deny lists.
    func decide(resources: [String], mvpd: String) -> [ResourceDecision] {
        resources.map { ResourceDecision(resource: $0, denial: self.deny.denial(resource: $0, mvpd: mvpd)) }
    }

    /// The deny lists in force.
    public func denyLists() -> DenyLists {
        self.deny
    }

    /// Replaces the deny lists.
    public func setDenyLists(_ lists: DenyLists) {
        self.deny = lists
    }
}
