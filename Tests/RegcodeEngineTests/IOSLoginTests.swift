import AccessEnablerAPI
import RegcodeEngine
import RegcodeSupport
import Testing

/// An iOS AccessEnabler never shows a registration code: the login goes through `navigateToUrl:` with the MVPD
/// login page, where a tvOS device reports `status` `REGCODE`.
@Suite struct IOSLoginTests {
    static let iOS = DeviceSSOSettings(platform: DevicePlatform(.ios, "17.0"))

    @Test func anIOSDeviceNavigatesToTheLoginPageInsteadOfShowingACode() {
        var h = EngineHarness(sso: Self.iOS)
        h.startLogin(code: "ABC1234")
        #expect(h.events.contains(.navigateToUrl("/api/v2/authenticate/REF30/ABC1234")))
        #expect(!h.events.contains { $0.statusID == .registrationCode })
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.events.contains(.setAuthenticationStatus(AccessEnabler.statusSuccess, .none)))
    }

    @Test func aV1IOSDeviceNavigatesToTheV1LoginPage() {
        var h = EngineHarness(profile: .v1, signingKeys: SigningKeys(publicKey: "p", secret: "s"), sso: Self.iOS)
        h.startLogin(code: "ABC1234")
        let url = h.events.compactMap { event -> String? in
            if case .navigateToUrl(let url) = event { return url }
            return nil
        }
        #expect(url.count == 1)
        #expect(url.first?.hasPrefix("/api/v1/authenticate?reg_code=ABC1234&requestor_id=REF30&mso_id=Cablevision&") == true, "\(url)")
        #expect(!h.events.contains { $0.statusID == .registrationCode })
    }

    @Test func aTVOSDeviceStillShowsTheCode() {
        var h = EngineHarness(sso: DeviceSSOSettings(platform: DevicePlatform(.tvos, "17.0")))
        h.startLogin(code: "ABC1234")
        #expect(h.events.contains { $0.statusID == .registrationCode })
        #expect(!h.events.contains { if case .navigateToUrl = $0 { true } else { false } })
    }
}
