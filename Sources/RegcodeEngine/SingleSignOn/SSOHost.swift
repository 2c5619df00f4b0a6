import Crypto

/// An app on a device: its id in the fleet (what socket calls name) and what single sign-on depends on.
package struct HostedApp: Sendable, Equatable {
    package var id: String
    package var identity: AppIdentity
    package init(id: String, identity: AppIdentity) {
        self.id = id
        self.identity = identity
    }
}

/// The device-wide single sign-on settings of a device that hosts apps.
package struct DeviceSSOSettings: Sendable, Equatable, Codable {
    package var platform: DevicePlatform
    package var storage: StoragePolicy
    package init(platform: DevicePlatform = DevicePlatform(.tvos, "17.0"), storage: StoragePolicy = StoragePolicy()) {
        self.platform = platform
        self.storage = storage
    }
}

/// One device's shared token storage and the AccessEnabler rules over it, for all its apps.
///
/// Pure: the fleet asks it what an app's AccessEnabler sees before a call and tells it what the app's
/// engine adopted or dropped after one; it answers with diagnostics and token changes to store. Apps
/// are addressed by their index on the device; index 0 is the device's first app.
package struct SSOHost: Sendable {
    package let settings: DeviceSSOSettings
    package let rules: SSORules
    package private(set) var apps: [HostedApp]
    /// Every token on the device, in the order they were stored (lookup takes the first usable one).
    package private(set) var tokens: [SharedToken]
    /// The profile each app's engine holds, as last seen: what a change is compared with.
    private var held: [AuthProfile?]
    private let identifiers: DeviceIdentifiers
    private let storedDeviceID: String
    /// The identity key of the first app as first installed: apps with this key keep the stored id.
    private let anchorKey: String

    /// - Parameters:
    ///   - storedDeviceID: the device's stable id from before it hosted several apps; the first app keeps
    ///     it (and so do apps iOS gives the same vendor id), so an existing device's backend state stays valid.
    ///   - heldProfiles: the profile each app's engine resumed with.
    package init(
        settings: DeviceSSOSettings,
        rules: SSORules = SSORules(),
        apps: [HostedApp],
        storedDeviceID: String,
        tokens: [SharedToken],
        heldProfiles: [AuthProfile?]
    ) {
        precondition(!apps.isEmpty, "a device hosts at least one app")
        self.settings = settings
        self.rules = rules
        self.apps = apps
        self.tokens = tokens
        self.storedDeviceID = storedDeviceID
        // The hardware secret is derived from the stored random id rather than stored beside it: one
        // secret per device, reproduced after any restart, and no new column to migrate.
        let secret = SHA256.hash(data: Array("regcoded-hardware|\(storedDeviceID)".utf8))
        identifiers = DeviceIdentifiers(hardwareSecret: Array(secret), platform: settings.platform)
        var first = apps[0].identity
        first.vendorGeneration = 0
        anchorKey = Self.identityKey(first, identifiers)
        held = apps.indices.map { heldProfiles.indices.contains($0) ? heldProfiles[$0] : nil }
    }

    /// What decides whether two apps get the same AccessEnabler device id: the MAC on iOS ≤ 6, else
    /// the vendor (and its generation).
    private static func identityKey(_ app: AppIdentity, _ identifiers: DeviceIdentifiers) -> String {
        identifiers.platform.isLegacyIOS ? "mac" : "\(identifiers.vendorKey(app))#\(app.vendorGeneration)"
    }

    package func index(of appID: String) -> Int? {
        apps.firstIndex { $0.id == appID }
    }

    /// The storage domain of an app, and the rule that chose it.
    package func storage(of app: Int) -> StorageChoice {
        settings.storage.domain(for: apps[app].identity, on: settings.platform)
    }

    /// The id the app's AccessEnabler binds tokens to and sends as its device id.
    package func deviceID(of app: Int) -> String {
        let identity = apps[app].identity
        return Self.identityKey(identity, identifiers) == anchorKey ? storedDeviceID : identifiers.aeDeviceId(identity)
    }

    /// The app's identifierForVendor, as iOS would report it.
    package func idfv(of app: Int) -> String {
        identifiers.idfv(apps[app].identity).uuidString
    }

    /// The vendor key IDFVs are grouped by (for explanations).
    package func vendorKey(of app: Int) -> String {
        identifiers.vendorKey(apps[app].identity)
    }

    /// The device's emulated MAC address.
    package var mac: String { identifiers.mac }

    // MARK: AccessEnabler calls

    /// What `setRequestor` does to storage before it completes: the version behaviours of ``SSORules``.
    /// Deleted tokens are gone from ``tokens`` on return; `cleared` lists apps whose engine held one.
    package mutating func setRequestor(app: Int) -> (events: [SSODiagnosticEvent], status: StatusReport?, cleared: [Int]) {
        let domain = storage(of: app).domain
        let effects = rules.setRequestor(
            app: apps[app].identity,
            domain: domain,
            deviceId: deviceID(of: app),
            tokens: tokens.map(\.metadata)
        )
        guard !effects.deletions.isEmpty else { return ([], nil, []) }
        var events: [SSODiagnosticEvent] = []
        let reason: SSODiagnosticEvent.WipeReason = effects.status == nil ? .deviceIdMismatch : .ownDeviceIdChanged
        var removed: [SharedToken] = []
        for deletion in effects.deletions {
            guard let position = tokens.firstIndex(where: { $0.metadata == deletion }) else { continue }
            let token = tokens.remove(at: position)
            removed.append(token)
            events.append(.tokenWiped(owner: token.creatorAppID, domain: domain.key, mvpd: token.profile.mvpd, reason: reason))
        }
        let cleared = forget(removed)
        return (events, effects.status, cleared)
    }

    /// The AccessEnabler's local lookup for `app`, with the diagnostics a lab sees for it.
    package func lookup(app: Int, configuredMVPDs: Set<String>, backend: APIProfile, now: Int64) -> (TokenLookupResult, [SSODiagnosticEvent]) {
        let identity = apps[app].identity
        let domain = storage(of: app).domain
        let result = rules.lookup(
            app: identity,
            domain: domain,
            deviceId: deviceID(of: app),
            requestor: identity.requestor,
            configuredMVPDs: configuredMVPDs,
            tokens: tokens.map(\.metadata),
            now: now,
            usesOtherAppsTokens: backend == .v1
        )
        var events: [SSODiagnosticEvent] = []
        for ignored in result.ignored where ignored.reason != .expired {
            events.append(.tokenIgnored(owner: owner(of: ignored.token), domain: domain.key, mvpd: ignored.token.mvpd, reason: ignored.reason))
        }
        if let token = result.token, token.creatorApp != identity.bundleId {
            events.append(.tokenShared(owner: owner(of: token), domain: domain.key, mvpd: token.mvpd))
        }
        return (result, events)
    }

    /// The stored token behind a lookup result.
    package func sharedToken(for metadata: StoredToken) -> SharedToken? {
        tokens.first { $0.metadata == metadata }
    }

    /// `logout` in `app`: every token of its domain goes (DOC `[OV]`). Returns the other apps whose engine
    /// held one of them, so they can forget it too.
    package mutating func logout(app: Int) -> [Int] {
        let doomed = Set(rules.logout(domain: storage(of: app).domain, tokens: tokens.map(\.metadata)))
        let removed = tokens.filter { doomed.contains($0.metadata) }
        tokens.removeAll { doomed.contains($0.metadata) }
        return forget(removed).filter { $0 != app }
    }

    /// Records what `app`'s engine now holds. A new profile is stored as the app's token in its domain
    /// (replacing the one in the same bucket); a dropped one takes its token out of storage (an
    /// AccessEnabler deletes a token the backend refused or that expired).
    /// - Parameter backend: the app's API; on REST v2 each app keeps its own token (its client's profile).
    /// - Returns: whether ``tokens`` changed.
    package mutating func engineHolds(_ profile: AuthProfile?, app: Int, backend: APIProfile, source: TokenSource = .adobe) -> Bool {
        let before = held[app]
        guard profile != before else { return false }
        held[app] = profile
        let domain = storage(of: app).domain
        if let profile {
            // Taken over from a token the app can use (shared): nothing new to store.
            let boundTo = deviceID(of: app)
            if tokens.contains(where: { $0.metadata.domain == domain && $0.metadata.boundDeviceId == boundTo && $0.profile == profile }) {
                return false
            }
            let identity = apps[app].identity
            let token = SharedToken(
                metadata: StoredToken(
                    domain: domain,
                    boundDeviceId: deviceID(of: app),
                    requestor: identity.requestor,
                    mvpd: profile.mvpd,
                    creatorApp: identity.bundleId,
                    notAfter: profile.expiresEpochMs,
                    formatGeneration: TokenFormatGeneration(accessEnabler: identity.accessEnabler)
                ),
                profile: profile,
                creatorAppID: apps[app].id,
                source: source
            )
            tokens.removeAll { $0.sameBucket(as: token, perClient: backend == .v2) }
            tokens.append(token)
            return true
        }
        guard let before else { return false }
        let count = tokens.count
        tokens.removeAll { $0.metadata.domain == domain && $0.profile == before }
        return tokens.count != count
    }

    /// The profile `app`'s engine holds, as last recorded.
    package func heldProfile(of app: Int) -> AuthProfile? { held[app] }

    /// Apps whose engine holds one of `removed`; their record is cleared (the caller clears the engines).
    private mutating func forget(_ removed: [SharedToken]) -> [Int] {
        var cleared: [Int] = []
        for app in apps.indices {
            guard let profile = held[app], removed.contains(where: { $0.profile == profile }) else { continue }
            // Another token in the app's domain may still carry the same profile (a shared one).
            if tokens.contains(where: { $0.metadata.domain == storage(of: app).domain && $0.profile == profile }) { continue }
            held[app] = nil
            cleared.append(app)
        }
        return cleared
    }

    private func owner(of metadata: StoredToken) -> String {
        tokens.first { $0.metadata == metadata }?.creatorAppID ?? metadata.creatorApp
    }

    /// Marks the vendor's apps as reinstalled after all were uninstalled: iOS hands out a new IDFV.
    package mutating func reinstallVendor(of app: Int) {
        let key = vendorKey(of: app)
        for index in apps.indices where vendorKey(of: index) == key {
            apps[index].identity.vendorGeneration += 1
        }
    }
}
