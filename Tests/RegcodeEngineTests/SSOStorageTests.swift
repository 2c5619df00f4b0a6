import AccessEnablerAPI
import Foundation
import RegcodeEngine
import Testing

/// One emulated device's token storage, driven through the pure single sign-on rules.
private struct SSODevice {
    var ids: DeviceIdentifiers
    var policy = StoragePolicy()
    var rules = SSORules()
    var tokens: [StoredToken] = []
    var now: Int64 = 1_800_000_000_000
    var mvpds: Set<String> = ["Cablevision"]

    init(_ platform: DevicePlatform, secret: [UInt8] = SSODevice.secret) {
        ids = DeviceIdentifiers(hardwareSecret: secret, platform: platform)
    }

    static let secret: [UInt8] = (0..<32).map { UInt8($0 &* 7 &+ 3) }

    func domain(_ app: AppIdentity) -> StorageDomain { policy.domain(for: app, on: ids.platform).domain }
    func deviceId(_ app: AppIdentity) -> String { ids.aeDeviceId(app) }

    /// The app starts: `setRequestor` behaviours (applied to storage), then "already authenticated?".
    @discardableResult
    mutating func launch(_ app: AppIdentity) -> (effects: StorageEffects, result: TokenLookupResult) {
        let effects = rules.setRequestor(app: app, domain: domain(app), deviceId: deviceId(app), tokens: tokens)
        delete(effects.deletions)
        let result = rules.lookup(
            app: app,
            domain: domain(app),
            deviceId: deviceId(app),
            requestor: app.requestor,
            configuredMVPDs: mvpds,
            tokens: tokens,
            now: now
        )
        return (effects, result)
    }

    /// The app completes a login: a token in its domain, bound to its device id.
    mutating func login(_ app: AppIdentity, mvpd: String = "Cablevision") {
        tokens.append(token(app, mvpd: mvpd))
    }

    func token(_ app: AppIdentity, mvpd: String = "Cablevision", ttl: Int64 = 86_400_000) -> StoredToken {
        StoredToken(
            domain: domain(app),
            boundDeviceId: deviceId(app),
            requestor: app.requestor,
            mvpd: mvpd,
            creatorApp: app.bundleId,
            notAfter: now + ttl,
            formatGeneration: TokenFormatGeneration(accessEnabler: app.accessEnabler)
        )
    }

    mutating func delete(_ deletions: [StoredToken]) {
        tokens.removeAll { deletions.contains($0) }
    }
}

private func app(
    _ bundleId: String,
    team: String = "T1",
    requestor: String = "REQ",
    ae: SemanticVersion = "1.10",
    source: InstallSource = .appStore,
    generation: Int = 0
) -> AppIdentity {
    AppIdentity(
        bundleId: bundleId,
        teamId: team,
        requestor: requestor,
        accessEnabler: ae,
        installSource: source,
        vendorGeneration: generation
    )
}

private let ios17 = DevicePlatform(.ios, "17.4")
private let ios6 = DevicePlatform(.ios, "6.1")
private let tvos17 = DevicePlatform(.tvos, "17.0")

/// The tech note's combination table (sso.md §1.2) and reproduction matrix (§3.1), at the storage level.
extension SSOStorageTests {
    @Suite struct CombinationTable {
        @Test func iOS6SharesEverythingAcrossTeams() {
            var d = SSODevice(ios6)
            let a = app("com.x.y.AppA", team: "T1", requestor: "REQ-A", ae: "1.7")
            let b = app("com.z.AppB", team: "T2", requestor: "REQ-B", ae: "1.7")
            #expect(d.domain(a) == .global && d.domain(b) == .global)
            #expect(d.deviceId(a) == d.deviceId(b))
            let launch1 = d.launch(a)
            #expect(launch1.result.token == nil)
            d.login(a)
            let launch2 = d.launch(b)
            #expect(launch2.result.token?.creatorApp == "com.x.y.AppA")
            let launch3 = d.launch(a)
            #expect(launch3.result.token?.creatorApp == "com.x.y.AppA")
        }

        @Test func r1SameTeamSamePrefixAuthenticatesOnce() {
            var d = SSODevice(ios17)
            let a = app("com.x.y.AppA", requestor: "REQ-A")
            let b = app("com.x.y.AppB", requestor: "REQ-B")
            #expect(d.domain(a) == .team("T1") && d.domain(b) == .team("T1"))
            #expect(d.deviceId(a) == d.deviceId(b))
            let launch4 = d.launch(a)
            #expect(launch4.result.token == nil)
            d.login(a)
            let opened = d.launch(b)
            #expect(opened.effects == .none)
            #expect(opened.result == .authenticated(d.tokens[0], ignored: []))
            let launch5 = d.launch(a)
            #expect(launch5.result.token == d.tokens[0])
            #expect(d.tokens.count == 1)
        }

        @Test func r2SameTeamOtherPrefixSeesTheTokenIgnoresItAndBothStayLoggedIn() {
            var d = SSODevice(ios17)
            let a = app("com.x.y.AppA")
            let b = app("com.z.AppB")
            #expect(d.domain(a) == d.domain(b))
            #expect(d.deviceId(a) != d.deviceId(b))
            d.login(a)
            let aToken = d.tokens[0]
            let opened = d.launch(b)
            #expect(opened.effects == .none)
            #expect(opened.result == .notAuthenticated(ignored: [IgnoredToken(token: aToken, reason: .deviceIdMismatch)]))
            d.login(b)
            let bToken = d.tokens[1]
            let launch6 = d.launch(a)
            #expect(launch6.result == .authenticated(aToken, ignored: []))
            let launch7 = d.launch(b)
            #expect(launch7.result == .authenticated(bToken, ignored: [IgnoredToken(token: aToken, reason: .deviceIdMismatch)]))
            #expect(d.tokens == [aToken, bToken])
        }

        @Test func r2PrimeAccessEnabler18ErasesTheOtherAppsSessionOnEverySwitch() {
            var d = SSODevice(ios17)
            let a = app("com.x.y.AppA", ae: "1.8")
            let b = app("com.z.AppB", ae: "1.8")
            d.login(a)
            let aToken = d.tokens[0]
            let bOpens = d.launch(b)
            #expect(bOpens.effects == StorageEffects(deletions: [aToken], diagnostics: [.tokenWiped(aToken)]))
            #expect(bOpens.result == .notAuthenticated(ignored: []))
            #expect(d.tokens.isEmpty)
            d.login(b)
            let bToken = d.tokens[0]
            let aOpens = d.launch(a)
            #expect(aOpens.effects == StorageEffects(deletions: [bToken], diagnostics: [.tokenWiped(bToken)]))
            #expect(aOpens.effects.status == nil)
            #expect(aOpens.result.token == nil)
            #expect(d.tokens.isEmpty)
        }

        @Test func r3DifferentTeamsKeepSeparateSessionsWhateverTheBundleIds() {
            var d = SSODevice(ios17)
            let a = app("com.x.y.AppA", team: "T1")
            let b = app("com.x.y.AppB", team: "T2")
            #expect(d.domain(a) == .team("T1") && d.domain(b) == .team("T2"))
            #expect(d.deviceId(a) != d.deviceId(b))
            expectSeparateSessions(&d, a, b)
        }

        @Test func tvOSLegacyAccessEnablerKeepsTokensPerApp() {
            var d = SSODevice(tvos17)
            let a = app("com.x.y.AppA", ae: "2.8")
            let b = app("com.x.y.AppB", ae: "2.8")
            #expect(d.domain(a) == .app("com.x.y.AppA") && d.domain(b) == .app("com.x.y.AppB"))
            #expect(d.deviceId(a) == d.deviceId(b))
            expectSeparateSessions(&d, a, b)
        }

        @Test(arguments: [ios17, tvos17])
        func accessEnabler36And37UseSeparateKeychainGenerations(platform: DevicePlatform) {
            var d = SSODevice(platform)
            let a = app("com.x.y.AppA", ae: "3.6.0")
            let b = app("com.x.y.AppB", ae: "3.7.0")
            #expect(d.domain(a) == .keychain(team: "T1", generation: .v30))
            #expect(d.domain(b) == .keychain(team: "T1", generation: .v37))
            #expect(d.deviceId(a) == d.deviceId(b))
            expectSeparateSessions(&d, a, b)
        }

        /// Each app logs in once; afterwards both are authenticated with their own token, nothing deleted.
        private func expectSeparateSessions(_ d: inout SSODevice, _ a: AppIdentity, _ b: AppIdentity) {
            let launch8 = d.launch(a)
            #expect(launch8.result.token == nil)
            d.login(a)
            let bFirst = d.launch(b)
            #expect(bFirst.effects == .none)
            #expect(bFirst.result == .notAuthenticated(ignored: []))
            d.login(b)
            for _ in 0..<2 {
                let aOpens = d.launch(a)
                let bOpens = d.launch(b)
                #expect(aOpens.effects == .none && bOpens.effects == .none)
                #expect(aOpens.result.token?.creatorApp == a.bundleId)
                #expect(bOpens.result.token?.creatorApp == b.bundleId)
            }
            #expect(d.tokens.count == 2)
        }
    }
}

/// Derived identifiers, storage rules and the lookup's reasons.
@Suite struct SSOStorageTests {
    @Test func bundlePrefixFollowsTheOSVersion() {
        let modern = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        let legacy = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios6)
        let tv = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: tvos17)
        #expect(modern.bundlePrefix(of: "com.x.y.AppA") == "com.x.y")
        #expect(tv.bundlePrefix(of: "com.x.y.AppA") == "com.x.y")
        #expect(legacy.bundlePrefix(of: "com.x.y.AppA") == "com.x")
        #expect(modern.bundlePrefix(of: "com.AppA") == "com")
        #expect(modern.bundlePrefix(of: "AppA") == "AppA")
        #expect(legacy.bundlePrefix(of: "AppA") == "AppA")
    }

    @Test func vendorKeyIsTeamAndPrefixOnTheAppStoreAndPrefixOtherwise() {
        let ids = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        #expect(ids.vendorKey(app("com.x.y.AppA")) == "T1|com.x.y")
        for source in [InstallSource.xcode, .adHoc, .simulator] {
            #expect(ids.vendorKey(app("com.x.y.AppA", source: source)) == "com.x.y")
        }
        // Off the App Store, two teams with a common prefix share an IDFV (the note's caveat).
        let t1 = app("com.x.y.AppA", team: "T1", source: .adHoc)
        let t2 = app("com.x.y.AppB", team: "T2", source: .adHoc)
        #expect(ids.idfv(t1) == ids.idfv(t2))
        #expect(ids.idfv(app("com.x.y.AppA", team: "T1")) != ids.idfv(app("com.x.y.AppB", team: "T2")))
    }

    @Test func identifiersAreDeterministicAcrossRestarts() {
        let a = app("com.x.y.AppA")
        let first = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        let restarted = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        #expect(first.mac == restarted.mac)
        #expect(first.idfv(a) == restarted.idfv(a))
        #expect(first.aeDeviceId(a) == restarted.aeDeviceId(a))
        let other = DeviceIdentifiers(hardwareSecret: [UInt8](repeating: 9, count: 32), platform: ios17)
        #expect(other.mac != first.mac && other.idfv(a) != first.idfv(a))
    }

    @Test func identifierFormats() {
        let ids = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        let mac = ids.mac
        #expect(mac.hasPrefix("02:") && mac.count == 17)
        #expect(mac.allSatisfy { "0123456789abcdef:".contains($0) })
        let idfv = ids.idfv(app("com.x.y.AppA")).uuidString
        #expect(Array(idfv)[14] == "5")
        let deviceId = ids.aeDeviceId(app("com.x.y.AppA"))
        #expect(deviceId.count == 64 && deviceId.allSatisfy(\.isHexDigit))
        // RFC 9562's example: v5 of "www.example.com" in the DNS namespace.
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(NameBasedUUID.v5(namespace: dns, name: "www.example.com").uuidString == "2ED6657D-E927-568B-95E1-2665A8AEA6A2")
    }

    @Test func deviceIdComesFromTheMACOnIOS6AndTheIDFVLater() {
        let legacy = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios6)
        let modern = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        #expect(legacy.mac == modern.mac)
        #expect(legacy.aeDeviceId(app("com.a.One", team: "T1")) == legacy.aeDeviceId(app("org.b.Two", team: "T2")))
        #expect(modern.aeDeviceId(app("com.a.One", team: "T1")) != modern.aeDeviceId(app("org.b.Two", team: "T2")))
        #expect(modern.aeDeviceId(app("com.a.One")) != legacy.aeDeviceId(app("com.a.One")))
    }

    @Test func idfvChangesWhenTheVendorGenerationIncrements() {
        let ids = DeviceIdentifiers(hardwareSecret: SSODevice.secret, platform: ios17)
        let before = app("com.x.y.AppA")
        let after = app("com.x.y.AppA", generation: 1)
        #expect(ids.idfv(before) != ids.idfv(after))
        #expect(ids.aeDeviceId(before) != ids.aeDeviceId(after))
        #expect(ids.idfv(after) == ids.idfv(app("com.x.y.AppA", generation: 1)))
    }

    @Test func sec412DeletesTheAppsOwnTokensWhenItsDeviceIdChanged() {
        var d = SSODevice(ios17)
        let a = app("com.x.y.AppA", ae: "2.5")
        let sibling = app("com.x.y.AppB", ae: "2.5")
        d.login(a)
        d.login(a, mvpd: "Comcast")
        d.login(sibling)
        let (old1, old2, siblingToken) = (d.tokens[0], d.tokens[1], d.tokens[2])
        let reinstalled = app("com.x.y.AppA", ae: "2.5", generation: 1)
        let opened = d.launch(reinstalled)
        #expect(opened.effects.deletions == [old1, old2])
        #expect(opened.effects.diagnostics == [.ownTokensDeleted(deviceIdChangedFrom: old1.boundDeviceId)])
        #expect(opened.effects.status?.id == .deviceIdChanged)
        #expect(opened.effects.status?.id.rawValue == "SEC412")
        #expect(opened.effects.status?.level == .warning)
        #expect(d.tokens == [siblingToken])
        #expect(opened.result == .notAuthenticated(ignored: [IgnoredToken(token: siblingToken, reason: .deviceIdMismatch)]))
    }

    @Test func noSEC412BeforeRelease25NorForAnotherAppsToken() {
        var d = SSODevice(ios17)
        d.login(app("com.x.y.AppA", ae: "2.4"))
        let launch9 = d.launch(app("com.x.y.AppA", ae: "2.4", generation: 1))
        #expect(launch9.effects == .none)
        let launch10 = d.launch(app("com.z.AppB", ae: "2.5"))
        #expect(launch10.effects == .none)
        #expect(d.tokens.count == 1)
    }

    @Test func sanitizerRangeIsConfigurable() {
        var d = SSODevice(ios17)
        d.rules.sanitizerWipe = "1.8.0"..<"1.8.1"
        let a = app("com.x.y.AppA", ae: "1.7.5")
        let b = app("com.z.AppB", ae: "1.7.5")
        d.login(a)
        let launch11 = d.launch(b)
        #expect(launch11.effects == .none)
        #expect(SSORules().sanitizerWipe.contains("1.7.5") && SSORules().sanitizerWipe.contains("1.8.9"))
        #expect(!SSORules().sanitizerWipe.contains("1.9") && !SSORules().sanitizerWipe.contains("1.7.4"))
    }

    @Test func storageRuleTable() {
        let policy = StoragePolicy()
        #expect(
            policy.domain(for: app("com.a.B", ae: "2.9.9"), on: DevicePlatform(.ios, "6.1.6"))
                == StorageChoice(domain: .global, rule: .legacyIOSPasteboard)
        )
        #expect(policy.domain(for: app("com.a.B", ae: "2.9.9"), on: DevicePlatform(.ios, "7")).domain == .team("T1"))
        #expect(policy.domain(for: app("com.a.B", ae: "1.10"), on: tvos17).domain == .app("com.a.B"))
        #expect(policy.domain(for: app("com.a.B", ae: "3.0"), on: ios6).domain == .keychain(team: "T1", generation: .v30))
        #expect(policy.domain(for: app("com.a.B", ae: "3.7.0"), on: tvos17).domain == .keychain(team: "T1", generation: .v37))
        #expect(policy.domain(for: app("com.a.B", ae: "3.7.0"), on: tvos17).isFaithful)
        // adHocPrivate is off by default, and only affects installs outside the App Store.
        #expect(policy.domain(for: app("com.a.B", source: .adHoc), on: ios17).domain == .team("T1"))
        let privateAdHoc = StoragePolicy(adHocPrivate: true)
        #expect(privateAdHoc.domain(for: app("com.a.B", source: .adHoc), on: ios17) == StorageChoice(domain: .app("com.a.B"), rule: .adHocPrivate))
        #expect(privateAdHoc.domain(for: app("com.a.B"), on: ios17).domain == .team("T1"))
    }

    @Test func scopeOverridesAreAppliedAndReportedNonFaithful() {
        let a = app("com.x.y.AppA", ae: "3.7.0")
        let cases: [(StorageScope, StorageDomain)] = [
            (.app, .app("com.x.y.AppA")), (.team, .team("T1")), (.global, .global),
        ]
        for (scope, domain) in cases {
            let choice = StoragePolicy(scope: scope).domain(for: a, on: tvos17)
            #expect(choice.domain == domain)
            #expect(choice.rule == .override && !choice.isFaithful)
        }
        // A lab can get R1's sharing on a tvOS persona with `team`.
        var d = SSODevice(tvos17)
        d.policy.scope = .team
        let tvA = app("com.x.y.AppA", ae: "2.8")
        let tvB = app("com.x.y.AppB", ae: "2.8")
        d.login(tvA)
        let launch12 = d.launch(tvB)
        #expect(launch12.result.token?.creatorApp == "com.x.y.AppA")
    }

    @Test func storageDomainKeysRoundTrip() {
        let domains: [StorageDomain] = [.global, .team("T1"), .app("com.x.y.AppA"), .keychain(team: "T1", generation: .v37)]
        #expect(domains.map(\.key) == ["global", "team:T1", "app:com.x.y.AppA", "keychain:T1:v37"])
        #expect(domains.compactMap { StorageDomain(key: $0.key) } == domains)
        #expect(StorageDomain(key: "team:") == nil && StorageDomain(key: "keychain:T1:v99") == nil)
    }

    @Test func logoutClearsTheWholeDomainAndNothingElse() {
        var d = SSODevice(ios17)
        let a = app("com.x.y.AppA")
        let b = app("com.z.AppB", requestor: "OTHER")
        let other = app("com.q.AppC", team: "T2")
        d.login(a)
        d.login(b)
        d.login(other)
        let deleted = d.rules.logout(domain: d.domain(a), tokens: d.tokens)
        #expect(deleted == Array(d.tokens.prefix(2)))
        d.delete(deleted)
        let launch13 = d.launch(a)
        #expect(launch13.result.token == nil)
        let launch14 = d.launch(other)
        #expect(launch14.result.token?.creatorApp == "com.q.AppC")
    }

    @Test func cancelClearsNothing() {
        var d = SSODevice(ios17)
        d.login(app("com.x.y.AppA"))
        #expect(d.rules.cancel(domain: d.domain(app("com.x.y.AppA")), tokens: d.tokens).isEmpty)
    }

    @Test func lookupNamesWhyATokenWasNotUsed() {
        var d = SSODevice(ios17)
        d.rules.requestorBoundMVPDs = ["PerRequestor"]
        d.mvpds = ["Cablevision", "PerRequestor"]
        let a = app("com.x.y.AppA", requestor: "REQ-A")
        let b = app("com.x.y.AppB", requestor: "REQ-B")
        let expired = d.token(a, ttl: 0)
        let notConfigured = d.token(a, mvpd: "Unlisted")
        let bound = d.token(a, mvpd: "PerRequestor")
        let newer = d.token(app("com.x.y.AppA", requestor: "REQ-A", ae: "3.7.0"))
        d.tokens = [expired, notConfigured, bound, newer]
        let reasons = d.launch(b).result.ignored.map(\.reason)
        // The 3.7 token lives in another domain, so B never sees it.
        #expect(reasons == [.expired, .mvpdNotConfigured, .otherRequestor])
        let launch15 = d.launch(a)
        #expect(launch15.result.token == bound)
        var mixed = d.token(a)
        mixed.formatGeneration = .v37
        d.tokens = [mixed]
        let launch16 = d.launch(a)
        #expect(launch16.result.ignored.map(\.reason) == [.unreadableFormat])
    }

    @Test func versionsCompareNumerically() {
        // Through a String variable: `SemanticVersion("…")` with a literal is the non-failable literal init.
        func parse(_ text: String) -> SemanticVersion? { SemanticVersion(text) }
        #expect(parse("1.10")! > parse("1.9")!)
        #expect(parse("1.10") == parse("1.10.0"))
        #expect(parse("3.7")?.description == "3.7.0")
        for bad in ["1.x", "", "1.2.3.4", "-1", "1..2", "+1"] {
            #expect(parse(bad) == nil, "\(bad)")
        }
    }
}
