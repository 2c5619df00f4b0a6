import AccessEnablerAPI
import AdobePassClient
import Foundation
import RegcodeEngine
import RegcodeSupport
import Testing

/// What the device emits for each entitlement variant (TempPass, promotional TempPass, degradation, home-based
/// authentication, parental controls, network item errors, several resources in one preauthorization), fed with
/// Adobe's documented sample bodies through the client's parser; callbacks checked in order.
@Suite struct EntitlementVariantTests {
    static func parse(_ request: BackendRequest, status: Int = 200, _ body: String) -> Result<BackendResponse, BackendFailure> {
        AdobePassResponseParser.parse(request: request, profile: .v2, status: status, retryAfter: nil, body: Data(body.utf8))
    }

    /// Answers the outstanding request with a sample body.
    static func answer(_ h: inout EngineHarness, status: Int = 200, _ body: String) {
        guard let request = h.outstanding?.request else {
            Issue.record("no request in flight to answer")
            return
        }
        h.respond(parse(request, status: status, body))
    }

    /// A device whose requestor lists Adobe's sample MVPDs (one of them TempPass), configured and checked, showing
    /// the picker; the clock starts just before `origin`.
    static func atPicker(provider: LoginProvider = .regular, email: String? = nil, origin: Int64 = 1_763_720_000_000) -> EngineHarness {
        var h = EngineHarness(originEpochMs: origin) { settings in
            settings.loginProvider = provider
            settings.tempPassEmail = email
        }
        h.command(.setRequestor(signingKeys: nil))
        onboarding: while let request = h.outstanding?.request {
            switch request {
            case .registerClient: h.respond(.success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
            case .obtainAccessToken: h.respond(.success(.accessToken(token: "token-1", expiresIn: .seconds(21600))))
            case .configuration: answer(&h, AdobeVariantSamples.configuration)
            default: break onboarding
            }
        }
        h.command(.checkAuthentication)
        h.command(.getAuthentication(mvpd: nil))
        return h
    }

    /// Logs a device in with TempPass_TEST40 the way the `login` scenario does with `provider: temppass`.
    static func tempPassLogin(email: String? = nil) -> (EngineHarness, mark: Int) {
        var h = atPicker(provider: .tempPass, email: email, origin: AdobeVariantSamples.profileTempPassNotBefore)
        let picker = h.events.last { $0.callback == .displayProviderDialog }
        let mark = h.events.count
        #expect(picker != nil)
        for command in picker.map({ Scenario.login.reaction(to: $0, settings: h.engine.settings) }) ?? [] { h.command(command) }
        #expect(h.outstanding?.request == .createSession(mvpd: "TempPass_TEST40"))
        answer(&h, AdobeVariantSamples.sessionTempPass)
        #expect(h.outstanding?.request == .fetchProfile(mvpd: "TempPass_TEST40"))
        answer(&h, AdobeVariantSamples.profileTempPass)
        return (h, mark)
    }

    static func authenticationTracking(_ h: EngineHarness, mvpd: String) -> DeviceEvent {
        let guid = h.engine.snapshot.profile.flatMap { profile in
            h.events.last { $0.args["eventName"] == "authenticationDetection" }?.args["data"]?.arrayValue?[2].stringValue
                ?? profile.userID
        }
        return .sendTrackingData(.authenticationDetection, ["YES", mvpd, guid ?? "None", "NO", "unknown", "ios", "tvOS"])
    }

    static func authorizationTracking(_ guid: String, mvpd: String, success: Bool, error: String = "None", details: String = "None") -> DeviceEvent {
        .sendTrackingData(.authorizationDetection, [success ? "YES" : "NO", mvpd, guid, "NO", error, details, "unknown", "ios", "tvOS"])
    }

    // MARK: TempPass

    @Test func thePickerShowsTempPassMVPDsAsSuch() throws {
        let h = Self.atPicker()
        let picker = try #require(h.events.last { $0.callback == .displayProviderDialog })
        let mvpds = try #require(picker.args["mvpds"]?.arrayValue)
        #expect(mvpds.map { $0["ID"]?.stringValue } == ["AdobePass_SMI", "TempPass_TEST40", "ATTOTT"])
        #expect(mvpds.map { $0["tempPass"] } == [.bool(false), .bool(true), .bool(false)])
    }

    @Test func theLoginScenarioPicksARegularMVPDUnlessToldToPickTempPass() throws {
        let regular = Self.atPicker()
        let picker = try #require(regular.events.last { $0.callback == .displayProviderDialog })
        #expect(Scenario.login.reaction(to: picker, settings: regular.engine.settings) == [.setSelectedProvider("AdobePass_SMI")])
        let tempPass = Self.atPicker(provider: .tempPass)
        #expect(Scenario.login.reaction(to: picker, settings: tempPass.engine.settings) == [.setSelectedProvider("TempPass_TEST40")])
        // Without a TempPass MVPD to pick, the app closes the picker.
        let none = DeviceEvent.displayProviderDialog([MVPD(id: "Cablevision", displayName: "Optimum")])
        #expect(Scenario.login.reaction(to: none, settings: tempPass.engine.settings) == [.setSelectedProvider(nil)])
    }

    @Test func aTempPassLoginSaysN011AfterTheAuthenticationStatus() throws {
        let (h, mark) = Self.tempPassLogin()
        #expect(
            h.events(since: mark) == [
                .sendTrackingData(.mvpdSelection, ["TempPass_TEST40", "unknown", "ios", "tvOS"]),
                .setAuthenticationStatus(1, .none),
                Self.authenticationTracking(h, mvpd: "TempPass_TEST40"),
                .status(.authenticatedTempPass, level: .info, message: "authenticated with TempPass", extra: ["mvpd": "TempPass_TEST40"]),
            ]
        )
        #expect(h.engine.snapshot.profile?.type == .temporary)
        #expect(h.engine.snapshot.profile?.loginKind == .tempPass)
        #expect(h.endedCodes.isEmpty, "TempPass needs no code")
    }

    @Test func aTempPassAuthorizationSaysZ011AfterTheToken() throws {
        var (h, _) = Self.tempPassLogin()
        let guid = try #require(h.events.last { $0.args["eventName"] == "authenticationDetection" }?.args["data"]?.arrayValue?[2].stringValue)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        #expect(h.outstanding?.request == .authorize(mvpd: "TempPass_TEST40", resource: "REF30"))
        Self.answer(&h, AdobeVariantSamples.decisionTempPass)
        #expect(
            h.events(since: mark) == [
                .setToken("PHNpZ25hdHVyZUluZm8...", resource: "REF30"),
                Self.authorizationTracking(guid, mvpd: "TempPass_TEST40", success: true),
                .status(.authorizedTempPass, level: .info, message: "authorized with TempPass", extra: ["resource": "REF30"]),
            ]
        )
    }

    @Test(arguments: [AdobeVariantSamples.decisionTempPassDurationExceeded, AdobeVariantSamples.decisionPromotionalResourcesExceeded])
    func aSpentTempPassSaysN111AndLogsTheDeviceOut(body: String) throws {
        var (h, _) = Self.tempPassLogin()
        let guid = try #require(h.events.last { $0.args["eventName"] == "authenticationDetection" }?.args["data"]?.arrayValue?[2].stringValue)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(&h, body)
        let decision = try #require(JSONValueParser.parse(Array(body.utf8))["decisions"]?.arrayValue?.first?["error"])
        let code = try #require(decision["code"]?.stringValue)
        let message = try #require(decision["message"]?.stringValue)
        #expect(
            h.events(since: mark) == [
                .status(.tempPassExpired, level: .warning, message: message, extra: ["mvpd": "TempPass_TEST40", "details": .string(code)]),
                .setAuthenticationStatus(0, .userNotAuthenticated),
                .tokenRequestFailed("REF30", errorCode: .userNotAuthorized, errorDescription: message),
                Self.authorizationTracking(guid, mvpd: "TempPass_TEST40", success: false, error: "User Not Authorized Error", details: message),
            ]
        )
        #expect(h.engine.snapshot.profile == nil)
        #expect(!h.engine.isAuthenticated)
    }

    @Test func aTempPassPastItsTTLSaysN111BeforeTheUnauthenticatedAnswer() {
        var (h, _) = Self.tempPassLogin()
        h.clock.advance(to: h.clock.now.advanced(by: .seconds(61)))
        let (mark, sent) = (h.events.count, h.sent.count)
        h.command(.checkAuthorization(resource: "REF30"))
        #expect(
            h.events(since: mark) == [
                .status(.tempPassExpired, level: .warning, message: "TempPass expired", extra: ["mvpd": "TempPass_TEST40"]),
                .setAuthenticationStatus(0, .userNotAuthenticated),
                .tokenRequestFailed("REF30", errorCode: .userNotAuthenticated, errorDescription: ""),
            ]
        )
        #expect(h.sent.count == sent, "an expired TempPass is known on the device")
    }

    @Test func aTempPassAlreadySpentAtLoginSaysN111InsteadOfACodeFailure() {
        var h = Self.atPicker(provider: .tempPass, origin: AdobeVariantSamples.profileTempPassNotBefore)
        let mark = h.events.count
        h.command(.setSelectedProvider("TempPass_TEST40"))
        Self.answer(&h, AdobeVariantSamples.sessionTempPass)
        Self.answer(&h, status: 403, AdobeVariantSamples.profileTempPassDurationExceeded)
        #expect(
            Array(h.events(since: mark).dropFirst()) == [
                .status(
                    .tempPassExpired,
                    level: .warning,
                    message: "The temporary access duration limit has been exceeded.",
                    extra: ["mvpd": "TempPass_TEST40", "details": "temporary_access_duration_limit_exceeded"]
                ),
                .setAuthenticationStatus(0, .userNotAuthenticated),
            ]
        )
    }

    @Test func promotionalTempPassSendsTheIdentityOnlyOnTempPassCalls() throws {
        var (h, _) = Self.tempPassLogin(email: "foo@bar.com")
        // Adobe's header page: {"email":"foo@bar.com"} → eyJlbWFpbCI6ImZvb0BiYXIuY29tIn0=
        let identity = "eyJlbWFpbCI6ImZvb0BiYXIuY29tIn0="
        h.command(.checkAuthorization(resource: "REF30"))
        #expect(h.outstanding?.context.tempPassIdentity == identity)
        Self.answer(&h, AdobeVariantSamples.decisionTempPass)
        h.command(.logout)
        h.respond(.success(.loggedOut))
        h.command(.getAuthentication(mvpd: "AdobePass_SMI"))
        #expect(h.outstanding?.request == .createSession(mvpd: "AdobePass_SMI"))
        #expect(h.outstanding?.context.tempPassIdentity == nil)
    }

    // MARK: Degradation

    @Test func anAuthNAllLoginSaysN010AndItsAuthorizationsZ010() throws {
        var h = Self.atPicker(origin: AdobeVariantSamples.profileDegradedNotBefore)
        let mark = h.events.count
        h.command(.setSelectedProvider("Cablevision"))
        Self.answer(&h, AdobeVariantSamples.sessionDegraded)
        #expect(h.outstanding?.request == .fetchProfile(mvpd: "Cablevision"))
        Self.answer(&h, AdobeVariantSamples.profileDegraded)
        #expect(
            Array(h.events(since: mark).dropFirst()) == [
                .setAuthenticationStatus(1, .none),
                Self.authenticationTracking(h, mvpd: "Cablevision"),
                .status(.authenticatedDegraded, level: .warning, message: "authenticated under degradation", extra: ["mvpd": "Cablevision"]),
            ]
        )
        #expect(h.engine.snapshot.profile?.loginKind == .degraded)
        let guid = try #require(h.events.last { $0.args["eventName"] == "authenticationDetection" }?.args["data"]?.arrayValue?[2].stringValue)

        let next = h.events.count
        h.command(.checkAuthorization(resource: "apasstest1"))
        Self.answer(&h, AdobeVariantSamples.decisionsDegraded)
        #expect(
            h.events(since: next) == [
                .setToken("TYGjZ33jjLPi78yuX99+...", resource: "apasstest1"),
                Self.authorizationTracking(guid, mvpd: "Cablevision", success: true),
                .status(.authorizedDegraded, level: .warning, message: "authorized under degradation", extra: ["resource": "apasstest1"]),
            ]
        )
    }

    @Test func anAuthZAllGrantOfARegularLoginSaysZ010() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(&h, AdobeVariantSamples.decisionsDegraded)
        #expect(h.events(since: mark).map(\.name) == ["setToken", "sendTrackingData", "status"])
        #expect(h.events.last?.statusID == .authorizedDegraded)
        #expect(h.engine.snapshot.profile?.loginKind == .regular)
    }

    @Test func anAuthZNoneDenialSaysZ169ThenTokenRequestFailed() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(&h, AdobeVariantSamples.decisionAuthZNone)
        let message = "The integration has an AuthZNone rule applied for the requested resources"
        let events = h.events(since: mark)
        #expect(events.map(\.name) == ["status", "tokenRequestFailed", "sendTrackingData"])
        #expect(
            events.first
                == .status(
                    .authorizationDegraded,
                    message: message,
                    extra: ["resource": "REF30", "details": "authorization_denied_by_degradation_rule"]
                )
        )
        #expect(events[1] == .tokenRequestFailed("REF30", errorCode: .userNotAuthorized, errorDescription: message))
        #expect(h.engine.isAuthenticated, "a denial does not log out")
    }

    // MARK: Item errors

    @Test func outOfHomeTheHBADenialSaysZ100AndDropsTheProfile() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(
            &h,
            AdobeVariantSamples.itemDenial(
                code: "authorization_denied_by_hba_policies",
                action: "authentication",
                message: AdobeVariantSamples.hbaMessage
            )
        )
        let events = h.events(since: mark)
        #expect(events.map(\.name) == ["status", "setAuthenticationStatus", "tokenRequestFailed", "sendTrackingData"])
        #expect(events.first?.statusID == .authorizationDenied)
        #expect(events.first?.args["statusDictionary"]?["details"] == "authorization_denied_by_hba_policies")
        #expect(events[1] == .setAuthenticationStatus(0, .userNotAuthenticated))
        #expect(events[2].args["errorCode"] == "User Not Authorized Error")
        #expect(h.engine.snapshot.profile == nil)
    }

    @Test func aParentalControlDenialSaysZ100AndKeepsTheLogin() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(
            &h,
            AdobeVariantSamples.itemDenial(
                code: "authorization_denied_by_parental_controls",
                action: "none",
                message: AdobeVariantSamples.parentalMessage
            )
        )
        let message = #"The MVPD has returned a "Deny" decision due parental controls settings for the specified resource."#
        let events = h.events(since: mark)
        #expect(events.map(\.name) == ["status", "tokenRequestFailed", "sendTrackingData"])
        #expect(
            events.first
                == .status(
                    .authorizationDenied,
                    message: message,
                    extra: ["resource": "REF30", "details": "authorization_denied_by_parental_controls"]
                )
        )
        #expect(h.engine.isAuthenticated)
    }

    @Test(arguments: ["network_connection_timeout", "network_received_error"])
    func aNetworkItemErrorSaysZ120(code: String) throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "REF30"))
        Self.answer(&h, AdobeVariantSamples.itemDenial(code: code, action: "retry", message: AdobeVariantSamples.networkMessage))
        let events = h.events(since: mark)
        #expect(events.map(\.name) == ["status", "tokenRequestFailed", "sendTrackingData"])
        #expect(events.first?.statusID == .authorizationUnavailable)
        #expect(events.first?.args["statusDictionary"]?["details"] == .string(code))
        #expect(h.engine.isAuthenticated)
    }

    // MARK: Several resources

    @Test func severalResourcesArePreauthorizedItemByItem() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkPreauthorizedResources(["resource3", "resource1", "resource2"]))
        #expect(h.outstanding?.request == .preauthorize(mvpd: "Cablevision", resources: ["resource3", "resource1", "resource2"]))
        Self.answer(&h, AdobeVariantSamples.preauthorization)
        let error = EnhancedError(
            status: 403,
            code: "preauthorization_denied_by_mvpd",
            action: "none",
            message: #"The MVPD has returned a "Deny" decision when requesting pre-authorization for the specified resource."#,
            helpUrl: "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html"
        )
        #expect(
            h.events(since: mark) == [
                .preauthorizedResources(["resource1", "resource2"], errors: [ResourceError(resource: "resource3", error: error)])
            ]
        )
        let args = try #require(h.events.last?.args)
        #expect(args["resources"] == ["resource1", "resource2"])
        let item = try #require(args["errors"]?.arrayValue?.first)
        #expect(item["resource"] == "resource3")
        #expect(item["code"] == "preauthorization_denied_by_mvpd")
        #expect(item["status"] == 403)
    }

    @Test func aDegradedPreauthorizationGrantsEveryResourceWithoutErrors() throws {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkPreauthorizedResources(["REF30", "apasstest1"]))
        Self.answer(&h, AdobeVariantSamples.decisionsDegraded)
        #expect(h.events(since: mark) == [.preauthorizedResources(["REF30", "apasstest1"])])
        #expect(h.events.last?.args == ["resources": ["REF30", "apasstest1"]])
    }
}
