#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One device's (or promotional identity's) use of a TempPass MVPD for a requestor.
struct TempPassTrial: Sendable, Equatable, Encodable {
    let serviceProvider: String
    let mvpd: String
    /// The first authorization request (or session), epoch milliseconds.
    let startedAt: Int64
    /// `startedAt` + the TTL configured when the trial started.
    let expiresAt: Int64
    /// Id of the temporary profile's session.
    let sessionId: String
    /// Device identifiers (Base64 fingerprints) that used the trial.
    var devices: [String]
    /// Promotional identities (decoded JSON) that used the trial.
    var identities: [String]
    /// What a reset's `key` may name for those identities (header values and the objects' string values).
    var identityKeys: [String]
    /// Distinct resources authorized, in order (promotional `used_assets`).
    var usedResources: [String]
}

/// Every TempPass trial, found by device or by promotional identity (Adobe's user identification tables: an
/// identity already seen continues its trial on a new device; a new identity on a known device continues the device's).
struct TempPassLedger: Sendable {
    private(set) var trials: [TempPassTrial] = []

    /// The trial of `identity` (promotional), else of `device`, for the pair.
    func index(serviceProvider: String, mvpd: String, device: String, identity: TempPassIdentity?) -> Int? {
        let pair = self.trials.indices.filter { self.trials[$0].serviceProvider == serviceProvider && self.trials[$0].mvpd == mvpd }
        if let identity, let found = pair.first(where: { self.trials[$0].identities.contains(identity.text) }) { return found }
        return pair.first { self.trials[$0].devices.contains(device) }
    }

    /// The trial at `index`, with `device` and `identity` recorded as its users.
    mutating func touch(_ index: Int, device: String, identity: TempPassIdentity?) -> TempPassTrial {
        if !self.trials[index].devices.contains(device) { self.trials[index].devices.append(device) }
        if let identity, !self.trials[index].identities.contains(identity.text) {
            self.trials[index].identities.append(identity.text)
        }
        if let identity {
            for key in identity.keys.sorted() where !self.trials[index].identityKeys.contains(key) { self.trials[index].identityKeys.append(key) }
        }
        return self.trials[index]
    }

    /// Starts a trial and returns its index.
    mutating func start(_ trial: TempPassTrial) -> Int {
        self.trials.append(trial)
        return self.trials.count - 1
    }

    mutating func recordUse(of resource: String, at index: Int) {
        if !self.trials[index].usedResources.contains(resource) { self.trials[index].usedResources.append(resource) }
    }

    /// Drops the pair's trials of `device` (its Base64 fingerprint or the decoded identifier), of identities a
    /// `key` names, or all of them when neither is given; returns how many.
    mutating func reset(serviceProvider: String, mvpd: String, device: String?, key: String?) -> Int {
        let before = self.trials.count
        self.trials.removeAll { trial in
            guard trial.serviceProvider == serviceProvider, trial.mvpd == mvpd else { return false }
            if let device {
                return trial.devices.contains { $0 == device || Data(base64Encoded: $0).flatMap { String(data: $0, encoding: .utf8) } == device }
            }
            if let key {
                return trial.identityKeys.contains(key)
            }
            return true
        }
        return before - self.trials.count
    }
}
