/// A per-device override of the storage rule table, for labs that want e.g. the seed table on tvOS.
package enum StorageScope: String, Sendable, Hashable, Codable, CaseIterable {
    /// The rule table (faithful).
    case auto
    /// Every app private. Non-faithful.
    case app
    /// One domain per team. Non-faithful.
    case team
    /// One domain for all apps. Non-faithful.
    case global
}

/// Which storage rule chose an app's domain, so an explanation can name it.
package enum StorageRule: String, Sendable, Hashable, Codable {
    /// iOS < 7, AccessEnabler < 3.0: the shared pasteboard (SEED).
    case legacyIOSPasteboard
    /// iOS ≥ 7, AccessEnabler < 3.0: the team's custom pasteboard (SEED, DOC).
    case teamPasteboard
    /// tvOS, AccessEnabler < 3.0: NSUserDefaults, never shared (DOC).
    case tvosUserDefaults
    /// AccessEnabler ≥ 3.0: the team keychain, split at 3.7.0 (DOC for the split; team scoping INFERRED).
    case keychain
    /// `adHocPrivate`: a non-App-Store install keeps a private domain (INFERRED knob).
    case adHocPrivate
    /// The device's ``StorageScope`` override chose the domain (non-faithful).
    case override
}

/// The domain chosen for an app, and why.
package struct StorageChoice: Sendable, Hashable {
    package var domain: StorageDomain
    package var rule: StorageRule
    /// False when an override, not Adobe's or Apple's behaviour, chose the domain.
    package var isFaithful: Bool { rule != .override }

    package init(domain: StorageDomain, rule: StorageRule) {
        self.domain = domain
        self.rule = rule
    }
}

/// The storage-domain rule table of sso.md §3.1, first match wins, plus the device's knobs.
package struct StoragePolicy: Sendable, Hashable, Codable {
    /// `storage.scope`; anything but `auto` is reported as non-faithful.
    package var scope: StorageScope
    /// `storage.adHocPrivate`: apps not installed from the App Store get a private domain (INFERRED, off by default).
    package var adHocPrivate: Bool

    package init(scope: StorageScope = .auto, adHocPrivate: Bool = false) {
        self.scope = scope
        self.adHocPrivate = adHocPrivate
    }

    /// AccessEnabler 3.0 moved tokens to the keychain; 3.7.0 started a new keychain generation (DOC `[UP370]`).
    package static let keychainFrom: SemanticVersion = "3.0.0"
    package static let keychainV37From: SemanticVersion = "3.7.0"

    /// The domain `app` uses on `platform`.
    ///
    /// The `adHocPrivate` row is listed last in sso.md, but the four rows above it cover every app, so it is
    /// checked first here: as an opt-in knob it must be able to win. With the knob off (default) this is the
    /// table exactly.
    package func domain(for app: AppIdentity, on platform: DevicePlatform) -> StorageChoice {
        switch scope {
        case .app: return StorageChoice(domain: .app(app.bundleId), rule: .override)
        case .team: return StorageChoice(domain: .team(app.teamId), rule: .override)
        case .global: return StorageChoice(domain: .global, rule: .override)
        case .auto: break
        }
        if adHocPrivate && app.installSource != .appStore {
            return StorageChoice(domain: .app(app.bundleId), rule: .adHocPrivate)
        }
        if app.accessEnabler >= Self.keychainFrom {
            let generation: StorageDomain.KeychainGeneration = app.accessEnabler >= Self.keychainV37From ? .v37 : .v30
            return StorageChoice(domain: .keychain(team: app.teamId, generation: generation), rule: .keychain)
        }
        switch platform.family {
        case .ios where platform.isLegacyIOS: return StorageChoice(domain: .global, rule: .legacyIOSPasteboard)
        case .ios: return StorageChoice(domain: .team(app.teamId), rule: .teamPasteboard)
        case .tvos: return StorageChoice(domain: .app(app.bundleId), rule: .tvosUserDefaults)
        }
    }
}
