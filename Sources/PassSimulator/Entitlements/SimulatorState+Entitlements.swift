import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Entitlement variants: TempPass trials, degradation, home-based authentication and item errors.
extension SimulatorState {
    /// The variants in force.
    package func entitlementSettings() -> EntitlementSettings {
        self.entitlements
    }

    /// Replaces the variants; TempPass trials of MVPDs that are no longer TempPass are dropped.
    package func setEntitlementSettings(_ settings: EntitlementSettings) {
        self.entitlements = settings
        for trial in self.tempPasses.trials where settings.tempPass[trial.mvpd] == nil {
            _ = self.tempPasses.reset(serviceProvider: trial.serviceProvider, mvpd: trial.mvpd, device: nil, key: nil)
        }
    }

    /// The TempPass trials, oldest first.
    func tempPassTrials() -> [TempPassTrial] {
        self.tempPasses.trials
    }

    /// How the pair is answered. A partner-SSO integration marked `degraded` is under AuthNAll.
    func entitlementVariant(serviceProvider: String, mvpd: String) -> EntitlementVariant {
        if let settings = self.entitlements.tempPass[mvpd] { return .tempPass(settings) }
        if let rule = self.entitlements.degradationRule(serviceProvider: serviceProvider, mvpd: mvpd) { return .degraded(rule) }
        if self.integrationSettings(serviceProvider: serviceProvider, mvpd: mvpd).degraded { return .degraded(.authNAll) }
        return .regular
    }

    /// Whether `mvpd` is a TempPass MVPD (`isTempPass` in the configuration).
    func isTempPass(_ mvpd: String) -> Bool {
        self.entitlements.tempPass[mvpd] != nil
    }

    // MARK: TempPass

    /// The device's (or identity's) trial of the pair, started now when there is none.
    func tempPassTrial(
        serviceProvider: String,
        mvpd: String,
        settings: TempPassSettings,
        device: String,
        identity: TempPassIdentity?
    ) -> (index: Int, trial: TempPassTrial) {
        let now = self.now
        let index =
            self.tempPasses.index(serviceProvider: serviceProvider, mvpd: mvpd, device: device, identity: identity)
            ?? self.tempPasses.start(
                TempPassTrial(
                    serviceProvider: serviceProvider,
                    mvpd: mvpd,
                    startedAt: now,
                    expiresAt: now + settings.ttl * 1000,
                    sessionId: UUID().uuidString.lowercased(),
                    devices: [],
                    identities: [],
                    identityKeys: [],
                    usedResources: []
                )
            )
        return (index, self.tempPasses.touch(index, device: device, identity: identity))
    }

    /// TempPass decisions for `resources`. Promotional TempPass needs an identity, and an authorization uses up one
    /// of its resources per resource not authorized before; a preauthorization uses none (Adobe: "the entire list …
    /// as successfully preauthorized" while time and resources remain).
    func tempPassDecisions(
        serviceProvider: String,
        mvpd: String,
        settings: TempPassSettings,
        device: String,
        identity: TempPassIdentity?,
        resources: [String],
        authorization: Bool
    ) -> [VariantDecision] {
        if settings.promotional, identity == nil {
            return resources.map { _ in .deny(.invalidTempPassIdentity) }
        }
        let (index, trial) = self.tempPassTrial(serviceProvider: serviceProvider, mvpd: mvpd, settings: settings, device: device, identity: identity)
        guard self.now < trial.expiresAt else {
            return resources.map { _ in .deny(.tempPassDurationExceeded(action: .authentication)) }
        }
        guard settings.promotional, let limit = settings.maxResources else {
            return resources.map { _ in .permit(notAfter: trial.expiresAt) }
        }
        return resources.map { resource in
            let used = self.tempPasses.trials[index].usedResources
            guard used.contains(resource) || used.count < limit else { return .deny(.tempPassResourcesExceeded) }
            if authorization { self.tempPasses.recordUse(of: resource, at: index) }
            return .permit(notAfter: trial.expiresAt)
        }
    }

    /// The temporary profile of the device's (or identity's) trial, as `GET profiles/{mvpd}` shows it; 403 when it is
    /// spent (Adobe's samples: basic `action: authentication`, promotional duration `action: none`).
    func tempPassProfile(
        serviceProvider: String,
        mvpd: String,
        settings: TempPassSettings,
        device: String,
        identity: TempPassIdentity?
    ) throws(EnhancedError) -> SimulatedProfile {
        let (_, trial) = self.tempPassTrial(serviceProvider: serviceProvider, mvpd: mvpd, settings: settings, device: device, identity: identity)
        guard self.now < trial.expiresAt else {
            throw .tempPassDurationExceeded(action: settings.promotional ? .none : .authentication)
        }
        if settings.promotional, let limit = settings.maxResources, trial.usedResources.count >= limit {
            throw .tempPassResourcesExceeded
        }
        return Self.temporaryProfile(trial, settings: settings)
    }

    /// The live temporary profiles a device's own trials give it (for `GET profiles`), by MVPD.
    func tempPassProfiles(serviceProvider: String, device: String, identity: TempPassIdentity?) -> [String: SimulatedProfile] {
        var found: [String: SimulatedProfile] = [:]
        for (mvpd, settings) in self.entitlements.tempPass {
            guard let index = self.tempPasses.index(serviceProvider: serviceProvider, mvpd: mvpd, device: device, identity: identity) else {
                continue
            }
            let trial = self.tempPasses.trials[index]
            let spent = settings.maxResources.map { trial.usedResources.count >= $0 } ?? false
            if self.now < trial.expiresAt, !spent { found[mvpd] = Self.temporaryProfile(trial, settings: settings) }
        }
        return found
    }

    /// Adobe's temporary profile: issuer Adobe, `userID` `temppass_<sha1 of the device>`, `expiration_date`, and for
    /// promotional TempPass `remaining_resources` and `used_assets`.
    static func temporaryProfile(_ trial: TempPassTrial, settings: TempPassSettings) -> SimulatedProfile {
        let userId = Self.temporaryUserId(device: trial.devices.first ?? trial.sessionId)
        var attributes: [String: ProfileAttribute] = [
            "userID": ProfileAttribute(.string(userId)),
            "expiration_date": ProfileAttribute(.integer(trial.expiresAt)),
        ]
        if settings.promotional, let limit = settings.maxResources {
            attributes["remaining_resources"] = ProfileAttribute(.integer(Int64(max(0, limit - trial.usedResources.count))))
            attributes["used_assets"] = ProfileAttribute(.list(trial.usedResources.map(MetadataValue.string)))
        }
        return SimulatedProfile(
            mvpd: trial.mvpd,
            userId: userId,
            householdId: userId,
            notBefore: trial.startedAt,
            notAfter: trial.expiresAt,
            sessionId: trial.sessionId,
            attributes: attributes,
            type: .temporary
        )
    }

    /// Adobe's Reset TempPass: drops the pair's trials of one device, of one identity key, or all; returns how many.
    package func resetTempPass(serviceProvider: String, mvpd: String, device: String? = nil, key: String? = nil) -> Int {
        self.tempPasses.reset(serviceProvider: serviceProvider, mvpd: mvpd, device: device, key: key)
    }

    // MARK: Degradation

    /// The device's degraded profile for the pair (AuthNAll): the stored one while valid, else a new one (issuer
    /// Adobe, `userID` with Adobe's degradation prefix `95cf93bcd183214a`), stored so logout can end it.
    func degradedProfile(serviceProvider: String, deviceIdentifier: String, clientId: String, mvpd: String) -> SimulatedProfile {
        let now = self.now
        let key = self.profileKey(serviceProvider, deviceIdentifier, clientId)
        if let profile = self.profiles[key]?[mvpd], profile.type == .degraded, now < profile.notAfter { return profile }
        let userId = Self.degradedUserId(serviceProvider: serviceProvider, mvpd: mvpd, device: deviceIdentifier)
        let profile = SimulatedProfile(
            mvpd: mvpd,
            userId: userId,
            householdId: userId,
            notBefore: now,
            notAfter: now + self.profileTTL(serviceProvider: serviceProvider, mvpd: mvpd),
            sessionId: UUID().uuidString.lowercased(),
            attributes: ["userID": ProfileAttribute(.string(userId))],
            type: .degraded
        )
        self.profiles[key, default: [:]][mvpd] = profile
        return profile
    }

    /// A TempPass user: `temppass_` and the SHA-1 of the device (the shape of Adobe's samples).
    static func temporaryUserId(device: String) -> String {
        "temppass_" + Self.hex(Insecure.SHA1.hash(data: Data(device.utf8)))
    }

    /// A degraded user: Adobe's degradation prefix `95cf93bcd183214a` and a hash of the pair and device.
    static func degradedUserId(serviceProvider: String, mvpd: String, device: String) -> String {
        "95cf93bcd183214a" + Self.hex(SHA256.hash(data: Data("\(serviceProvider)/\(mvpd)/\(device)".utf8))).prefix(40)
    }

    private static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    // MARK: Home-based authentication and item errors

    /// The `hba_status` attribute of a profile of `mvpd` obtained from `peerAddress`, and the profile's lifetime when
    /// the home network shortens it; `nil` for an MVPD without home-based authentication.
    func homeBasedStatus(mvpd: String, peerAddress: String?) -> (attribute: ProfileAttribute, ttl: Int64?)? {
        guard let home = self.entitlements.homeNetworks[mvpd] else { return nil }
        let atHome = home.contains(peerAddress)
        return (ProfileAttribute(.string(atHome ? "true" : "false")), atHome ? home.ttl.map { $0 * 1000 } : nil)
    }

    /// Why a profile obtained at home may not be used from `peerAddress`: `authorization_denied_by_hba_policies` when
    /// its `hba_status` is `true`, its MVPD has home-based authentication and the address is out of home.
    func homeBasedDenial(profile: SimulatedProfile, peerAddress: String?) -> EnhancedError? {
        guard let home = self.entitlements.homeNetworks[profile.mvpd], profile.attributes["hba_status"]?.value == .string("true"),
            !home.contains(peerAddress)
        else { return nil }
        return .deniedByHomeBasedPolicies
    }

    /// The item error configured for `resource` and `mvpd`, if any.
    func itemError(resource: String, mvpd: String) -> EnhancedError? {
        self.entitlements.itemErrors.rule(resource: resource, mvpd: mvpd).map { $0.code.error(details: $0.details) }
    }
}
