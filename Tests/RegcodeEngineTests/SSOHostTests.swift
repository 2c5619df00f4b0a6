import RegcodeEngine
import Testing

/// The device-wide storage the apps of one device share: which id each app binds tokens to, what a
/// lookup finds, and what logout, wipes and dropped profiles do to the other apps.
@Suite struct SSOHostTests {
    static let appA = HostedApp(id: "A", identity: AppIdentity(bundleId: "com.x.y.AppA", teamId: "T1", requestor: "REF30", accessEnabler: "1.10"))
    static let appB = HostedApp(id: "B", identity: AppIdentity(bundleId: "com.x.y.AppB", teamId: "T1", requestor: "REF30", accessEnabler: "1.10"))
    static let appC = HostedApp(id: "C", identity: AppIdentity(bundleId: "com.z.AppC", teamId: "T1", requestor: "REF30", accessEnabler: "1.10"))
    static let ios17 = DeviceSSOSettings(platform: DevicePlatform(.ios, "17.0"))
    static let profile = AuthProfile(mvpd: "Comcast_SSO", userID: "u", expiresEpochMs: 10_000)

    static func host(_ apps: [HostedApp] = [appA, appB, appC], settings: DeviceSSOSettings = ios17) -> SSOHost {
        SSOHost(settings: settings, apps: apps, storedDeviceID: "stored-id", tokens: [], heldProfiles: [])
    }

    @Test func theFirstAppAndItsVendorKeepTheStoredIDOthersDeriveTheirs() {
        let host = Self.host()
        #expect(host.deviceID(of: 0) == "stored-id")
        #expect(host.deviceID(of: 1) == "stored-id", "same team and bundle prefix: the same IDFV")
        #expect(host.deviceID(of: 2) != "stored-id")
        #expect(host.deviceID(of: 2) == Self.host().deviceID(of: 2), "derived ids are reproducible")
        #expect(
            host.deviceID(of: 2)
                != SSOHost(settings: Self.ios17, apps: [Self.appA, Self.appB, Self.appC], storedDeviceID: "other", tokens: [], heldProfiles: [])
                .deviceID(of: 2)
        )
    }

    @Test func aReinstalledVendorGetsANewDeviceID() {
        var host = Self.host()
        let before = host.deviceID(of: 0)
        host.reinstallVendor(of: 0)
        #expect(host.deviceID(of: 0) != before)
        #expect(host.deviceID(of: 1) == host.deviceID(of: 0), "the vendor's apps move together")
    }

    @Test func aStoredProfileIsSharedWithinTheDomainAndIgnoredAcrossDeviceIDs() {
        var host = Self.host()
        let stored = host.engineHolds(Self.profile, app: 0, backend: .v1)
        #expect(stored)
        #expect(host.tokens.count == 1)
        let (forB, eventsB) = host.lookup(app: 1, configuredMVPDs: ["Comcast_SSO"], backend: .v1, now: 0)
        #expect(forB.token != nil)
        #expect(eventsB == [.tokenShared(owner: "A", domain: "team:T1", mvpd: "Comcast_SSO")])
        let (forC, eventsC) = host.lookup(app: 2, configuredMVPDs: ["Comcast_SSO"], backend: .v1, now: 0)
        #expect(forC.token == nil)
        #expect(eventsC == [.tokenIgnored(owner: "A", domain: "team:T1", mvpd: "Comcast_SSO", reason: .deviceIdMismatch)])
        // On REST v2 another app's profile belongs to its client: not used (INFERRED, see TokenIgnoreReason).
        #expect(host.lookup(app: 1, configuredMVPDs: ["Comcast_SSO"], backend: .v2, now: 0).0.token == nil)
        // Expired tokens are passed over without a diagnostic.
        #expect(host.lookup(app: 1, configuredMVPDs: ["Comcast_SSO"], backend: .v1, now: 10_000).1.isEmpty)
    }

    @Test func logoutEmptiesTheDomainAndNamesTheAppsThatHeldIt() {
        var host = Self.host()
        _ = host.engineHolds(Self.profile, app: 0, backend: .v1)
        _ = host.engineHolds(Self.profile, app: 1, backend: .v1)  // took A's token over: nothing new is stored
        #expect(host.tokens.count == 1)
        #expect(host.logout(app: 0) == [1])
        #expect(host.tokens.isEmpty)
        #expect(host.heldProfile(of: 1) == nil)
    }

    /// REST v2: each app's profile belongs to its own client, so a second app's login in the same domain stores a
    /// second token instead of replacing the first app's.
    @Test func v2AppsOfOneVendorKeepTheirOwnTokens() {
        var host = Self.host()
        let profileB = AuthProfile(mvpd: "Comcast_SSO", userID: "u", expiresEpochMs: 20_000)
        _ = host.engineHolds(Self.profile, app: 0, backend: .v2)
        _ = host.engineHolds(profileB, app: 1, backend: .v2)
        #expect(host.tokens.map(\.creatorAppID) == ["A", "B"])
        #expect(
            host.lookup(app: 0, configuredMVPDs: ["Comcast_SSO"], backend: .v2, now: 0).0.token.map { host.sharedToken(for: $0)?.profile }
                == Self.profile
        )
        #expect(
            host.lookup(app: 1, configuredMVPDs: ["Comcast_SSO"], backend: .v2, now: 0).0.token.map { host.sharedToken(for: $0)?.profile } == profileB
        )
        // On v1 the bucket has no app: the newer login replaces the token both apps share.
        var v1 = Self.host()
        _ = v1.engineHolds(Self.profile, app: 0, backend: .v1)
        _ = v1.engineHolds(profileB, app: 1, backend: .v1)
        #expect(v1.tokens.map(\.creatorAppID) == ["B"])
    }

    @Test func aDroppedProfileTakesItsTokenOut() {
        var host = Self.host()
        _ = host.engineHolds(Self.profile, app: 0, backend: .v1)
        let dropped = host.engineHolds(nil, app: 0, backend: .v1)
        #expect(dropped)
        #expect(host.tokens.isEmpty)
        let again = host.engineHolds(nil, app: 0, backend: .v1)
        #expect(!again, "nothing changes twice")
    }

    @Test func theSanitizerOf18WipesOtherDeviceIDsTokensAtSetRequestor() {
        let old = [Self.appA, Self.appC].map { app -> HostedApp in
            var app = app
            app.identity.accessEnabler = "1.8"
            return app
        }
        var host = Self.host(old)
        _ = host.engineHolds(Self.profile, app: 0, backend: .v1)
        let (events, status, cleared) = host.setRequestor(app: 1)
        #expect(events == [.tokenWiped(owner: "A", domain: "team:T1", mvpd: "Comcast_SSO", reason: .deviceIdMismatch)])
        #expect(status == nil)
        #expect(cleared == [0])
        #expect(host.tokens.isEmpty)
    }

    @Test func sec412WhenTheAppsOwnDeviceIDChanged() {
        let apps = [Self.appA, Self.appB].map { app -> HostedApp in
            var app = app
            app.identity.accessEnabler = "2.5"
            return app
        }
        var host = Self.host(apps)
        _ = host.engineHolds(Self.profile, app: 0, backend: .v1)
        host.reinstallVendor(of: 0)
        let (events, status, cleared) = host.setRequestor(app: 0)
        #expect(status?.id == .deviceIdChanged)
        #expect(status?.level == .warning)
        #expect(events.count == 1)
        #expect(cleared == [0])
    }

    @Test func explainSaysWhyForEveryToken() {
        var host = Self.host()
        _ = host.engineHolds(Self.profile, app: 2, backend: .v1)
        _ = host.engineHolds(Self.profile, app: 0, backend: .v1)
        let explanation = host.explain(app: 1, configuredMVPDs: ["Comcast_SSO"], backend: .v1, now: 0)
        #expect(explanation.domain == .team("T1"))
        #expect(explanation.faithful)
        #expect(explanation.candidates.map(\.verdict) == [.ignored(.deviceIdMismatch), .used])
        let override = Self.host(settings: DeviceSSOSettings(platform: DevicePlatform(.ios, "17.0"), storage: StoragePolicy(scope: .app)))
        #expect(!override.explain(app: 0, configuredMVPDs: [], backend: .v1, now: 0).faithful)
    }
}
