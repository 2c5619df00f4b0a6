import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

/// A `rest-v2` device follows Adobe's REST v2 documents: a launch check when it opens, the MVPD list only for the
/// picker and cached, app states instead of callbacks; an `accessenabler` device keeps the SDK's cookbook.
@Suite struct NativeAppPersonaTests {
    static func nativeApp(presetMVPD: String? = nil) -> EngineHarness {
        EngineHarness(presetMVPD: presetMVPD) { $0.persona = .restV2 }
    }

    static let profile = AuthProfile(mvpd: "Cablevision", userID: "u1", expiresEpochMs: 1_763_720_000_000 + 86_400_000)

    @Test func openingAsksWhichProfilesTheBackendHoldsAndNotTheConfiguration() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        #expect(h.sent.map(\.request.name) == ["register", "token", "profiles"])
        #expect(h.outstanding?.request == .launchProfiles(mvpd: nil))
        h.respond(.success(.profiles([])))
        #expect(h.events == [.app(.profilesChecked(profiles: [], chosen: nil, reason: .none))])
        #expect(h.engine.snapshot.profile == nil)
    }

    @Test func severalProfilesChooseTheOneValidLongest() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        var short = Self.profile
        short.mvpd = "DTV"
        short.expiresEpochMs -= 3_600_000
        h.respond(.success(.profiles([Self.profile, short])))
        #expect(h.events.first == .app(.profilesChecked(profiles: [Self.profile, short], chosen: "Cablevision", reason: .longestValidity)))
        #expect(h.events.last == .app(.signedIn(Self.profile)))
        #expect(h.engine.snapshot.profile == Self.profile)
        // Signed in: the picker's configuration is never asked for.
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.outstanding == nil)
        #expect(!h.sent.contains { $0.request == .configuration })
    }

    @Test func aReturningAppChecksItsKnownMVPD() {
        var snapshot = DeviceSnapshot()
        snapshot.selectedMVPD = "DTV"
        snapshot.mvpds = []
        var h = EngineHarness(snapshot: snapshot) { $0.persona = .restV2 }
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .launchProfiles(mvpd: "DTV"))
    }

    @Test func theConfigurationIsLoadedForThePickerAndCachedThreeMinutes() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.respond(.success(.profiles([])))
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.outstanding?.request == .configuration)
        h.respond(.success(.configuration(mvpds: EngineHarness.mvpds)))
        #expect(h.events.suffix(2) == [.app(.configurationLoaded(mvpds: 2, fromCache: false, ageMs: 0)), .app(.providerPicker(EngineHarness.mvpds))])

        // Cancelled and asked again two minutes later: the cached list, no request.
        h.command(.setSelectedProvider(nil))
        h.clock.advance(by: .seconds(120))
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.outstanding == nil)
        #expect(
            h.events.suffix(2) == [.app(.configurationLoaded(mvpds: 2, fromCache: true, ageMs: 120_000)), .app(.providerPicker(EngineHarness.mvpds))]
        )

        // Past three minutes: loaded again.
        h.command(.setSelectedProvider(nil))
        h.clock.advance(by: .seconds(61))
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.outstanding?.request == .configuration)
    }

    @Test func aCodeLoginReportsAppStatesAndNoCallbacks() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.respond(.success(.profiles([])))
        h.command(.getAuthentication(mvpd: nil))
        h.answerHousekeeping()
        h.command(.setSelectedProvider("Cablevision"))
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respond(.success(.session(IssuedCode(code: "ABC1234", expiresEpochMs: h.clock.epochMillisecondsNow + 1_800_000, mvpd: "Cablevision"))))
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        h.respond(.success(.profile(nil)))
        h.fireNextTimer()
        h.respond(.success(.profile(Self.profile)))
        #expect(
            h.eventNames == [
                "app.profilesChecked", "app.configurationLoaded", "app.providerPicker", "app.sessionCreated", "app.signedIn",
            ]
        )
        #expect(h.events.allSatisfy { $0.callback == nil })
        #expect(h.events.last?.loginSignal == .signedIn)
    }

    @Test func anExpiredCodeEndsTheSession() {
        var h = Self.nativeApp(presetMVPD: "Cablevision")
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.respond(.success(.profiles([])))
        h.command(.getAuthentication(mvpd: nil))
        h.respond(.success(.session(IssuedCode(code: "ABC1234", expiresEpochMs: h.clock.epochMillisecondsNow + 30_000, mvpd: "Cablevision"))))
        for _ in 0..<20 where h.timers[.codeExpiry] != nil {
            if h.outstanding != nil { h.respond(.success(.profile(nil))) }
            h.fireNextTimer()
        }
        #expect(h.events.last == .app(.sessionEnded(reason: .expired, error: nil)))
        #expect(h.events.last?.saysCodeExpired == true)
    }

    @Test func everyCallCarriesTheDeviceHeadersPolicyAndTheAppsOwnUserAgent() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let context = h.outstanding?.context
        #expect(context?.deviceHeaders == .everyCall)
        #expect(context?.jsonCharset == true)
        #expect(context?.identity.userAgent == PersonaRules.restV2.defaultUserAgent)
        let info = context.flatMap { Data(base64Encoded: $0.deviceInfo) }.flatMap { try? JSONValueParser.parse($0) }
        #expect(info?["connectionType"] == "WiFi")

        var sdk = EngineHarness()
        sdk.command(.setRequestor(signingKeys: nil))
        let sdkContext = sdk.outstanding?.context
        #expect(sdkContext?.deviceHeaders == .oas)
        #expect(sdkContext?.jsonCharset == false)
        #expect(sdkContext?.identity.userAgent == ClientIdentity.sdkUserAgent)
        let sdkInfo = sdkContext.flatMap { Data(base64Encoded: $0.deviceInfo) }.flatMap { try? JSONValueParser.parse($0) }
        #expect(sdkInfo?["connectionType"] == nil)
    }

    @Test func aThrottledCallWaitsAtLeastASecond() {
        var h = Self.nativeApp()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let before = h.now
        h.respond(.failure(.http(status: 429, retryAfter: nil, error: nil)), latency: .zero)
        let retry = h.timers[.retry]
        #expect(retry.map { before.duration(to: $0) >= .seconds(1) } == true)
        #expect(h.events.last == .app(.throttled(call: "profiles", waitMs: retry.map { before.duration(to: $0).milliseconds } ?? -1)))
    }
}
