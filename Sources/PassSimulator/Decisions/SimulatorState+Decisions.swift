#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Authorization decisions and the deny lists behind them.
extension SimulatorState {
    /// Decides each resource for `profile` used from `peerAddress`: home-based policies first (they refuse the
    /// authentication, whatever the resource), then the configured item errors, then the deny lists.
    func decide(resources: [String], profile: SimulatedProfile, peerAddress: String?) -> [ResourceDecision] {
        let homeDenial = self.homeBasedDenial(profile: profile, peerAddress: peerAddress)
        return resources.map { resource in
            if let homeDenial { return ResourceDecision(resource: resource, outcome: .error(homeDenial)) }
            if let error = self.itemError(resource: resource, mvpd: profile.mvpd) {
                return ResourceDecision(resource: resource, outcome: .error(error))
            }
            if let details = self.deny.denial(resource: resource, mvpd: profile.mvpd) {
                return ResourceDecision(resource: resource, outcome: .deniedByMVPD(details))
            }
            return ResourceDecision(resource: resource, outcome: .permit)
        }
    }

    /// Decides each resource for a user of `mvpd` against the deny lists alone (REST v1).
    func decide(resources: [String], mvpd: String) -> [ResourceDecision] {
        resources.map { resource in
            ResourceDecision(resource: resource, outcome: self.deny.denial(resource: resource, mvpd: mvpd).map { .deniedByMVPD($0) } ?? .permit)
        }
    }

    /// The deny lists in force.
    package func denyLists() -> DenyLists {
        self.deny
    }

    /// Replaces the deny lists.
    package func setDenyLists(_ lists: DenyLists) {
        self.deny = lists
    }
}
