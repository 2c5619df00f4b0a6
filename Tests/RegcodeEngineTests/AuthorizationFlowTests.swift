import AccessEnablerAPI
import RegcodeEngine
import Testing

/// Flow 9 of access-enabler-api.md §7 (authorization) on REST v2 and v1: the exact callbacks, in order.
@Suite struct AuthorizationFlowTests {
    static let token = "PHNpZ25hdHVyZUluZm8+c2lnbmVkPC9zaWduYXR1cmVJbmZvPg=="
    static let authorizationExpiry: Int64 = 1_763_720_000_000 + 86_400_000
    static let details = #"Your subscription package does not include the "Live" channel"#

    /// The tracking GUID the device reported when it logged in (MD5 of the user id).
    static func guid(_ h: EngineHarness) -> String {
        h.events.last { $0.args["eventName"] == "authenticationDetection" }?.args["data"]?.arrayValue?[2].stringValue ?? ""
    }

    static func tracking(_ h: EngineHarness, success: Bool, error: String = "None", details: String = "None") -> DeviceEvent {
        .sendTrackingData(.authorizationDetection, [success ? "YES" : "NO", "Cablevision", guid(h), "NO", error, details, "unknown", "ios", "tvOS"])
    }

    /// Answers an authorization the way each API grants it: v2 in one decision carrying the token, v1 with an
    /// AuthZ token and then a media token.
    static func grant(_ h: inout EngineHarness, _ resource: String, profile: APIProfile) {
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: resource))
        let media = MediaToken(resource: resource, serializedToken: token, expiresEpochMs: 1_763_720_420_000)
        switch profile {
        case .v2:
            h.respond(
                .success(
                    .authorization(AuthorizationDecision(resource: resource, authorized: true, expiresEpochMs: authorizationExpiry, token: media))
                )
            )
        case .v1:
            let before = h.events.count
            h.respond(.success(.authorization(AuthorizationDecision(resource: resource, authorized: true, expiresEpochMs: authorizationExpiry))))
            #expect(h.events.count == before, "v1 reports nothing before the media token is in")
            #expect(h.outstanding?.request == .mediaToken(mvpd: "Cablevision", resource: resource))
            h.respond(.success(.mediaToken(media)))
        }
    }

    @Test func trackingGUIDIsTheMD5OfTheUserID() {
        // md5("user-1"), computed independently.
        #expect(Self.guid(EngineHarness.authenticated()) == "d6d7705392bc7af633328bea8c4c6904")
    }

    @Test(arguments: APIProfile.allCases)
    func grantedAuthorizationSetsTheTokenThenTracks(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "Live"))
        Self.grant(&h, "Live", profile: profile)
        #expect(h.events(since: mark) == [.setToken(Self.token, resource: "Live"), Self.tracking(h, success: true)])
        #expect(h.outstanding == nil)
        #expect(h.engine.snapshot.phase == .authenticated)
    }

    @Test(arguments: APIProfile.allCases)
    func deniedAuthorizationReportsZ100ThenTokenRequestFailedThenTracks(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "Live"))
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
        let error = EnhancedError(status: 403, code: "authorization_denied_by_mvpd", message: "User not authorized", details: Self.details)
        h.respond(.success(.authorization(AuthorizationDecision(resource: "Live", authorized: false, error: error))))
        #expect(
            h.events(since: mark) == [
                .status(
                    StatusID(rawValue: "Z100"),
                    level: .error,
                    message: Self.details,
                    extra: ["resource": "Live", "details": "authorization_denied_by_mvpd"]
                ),
                .tokenRequestFailed("Live", errorCode: "User Not Authorized Error", errorDescription: Self.details),
                Self.tracking(h, success: false, error: "User Not Authorized Error", details: Self.details),
            ]
        )
        // A denial is a decision about the resource, not about the login.
        #expect(h.engine.isAuthenticated)
    }

    @Test(arguments: APIProfile.allCases)
    func checkAuthorizationWithoutLoginFailsAtOnce(profile: APIProfile) {
        var h = EngineHarness(profile: profile)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let (mark, sent) = (h.events.count, h.sent.count)
        h.command(.checkAuthorization(resource: "Live"))
        #expect(
            h.events(since: mark) == [
                .setAuthenticationStatus(0, "User Not Authenticated Error"),
                .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: ""),
            ]
        )
        #expect(h.sent.count == sent)
    }

    @Test(arguments: APIProfile.allCases)
    func getAuthorizationLogsInFirstThenAuthorizes(profile: APIProfile) {
        var h = EngineHarness(profile: profile)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let mark = h.events.count
        h.command(.getAuthorization(resource: "Live"))
        #expect(h.events(since: mark) == [.displayProviderDialog(EngineHarness.mvpds)])
        h.command(.setSelectedProvider("Cablevision"))
        if profile == .v1 { h.respond(.success(.authenticationStatus(false))) }
        h.respondWithCode("ABC1234")
        h.respond(.success(.profile(EngineHarness.approved)))
        Self.grant(&h, "Live", profile: profile)
        #expect(
            h.events(since: mark).map(\.name) == [
                "displayProviderDialog", "sendTrackingData", "status", "setAuthenticationStatus", "sendTrackingData", "setToken", "sendTrackingData",
            ]
        )
        #expect(h.events.suffix(2) == [.setToken(Self.token, resource: "Live"), Self.tracking(h, success: true)])
    }

    @Test func getAuthorizationWhoseLoginIsCancelledFailsAsNotAuthenticated() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let mark = h.events.count
        h.command(.getAuthorization(resource: "Live"))
        h.command(.setSelectedProvider(nil))
        #expect(
            h.events(since: mark) == [
                .displayProviderDialog(EngineHarness.mvpds),
                .status(.providerSelectionCancelled, level: .info, message: "authentication cancelled"),
                .setAuthenticationStatus(0, "Provider Not Selected Error"),
                .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: ""),
            ]
        )
    }

    @Test func getAuthorizationWhileAuthenticatedIsCheckAuthorization() {
        var h = EngineHarness.authenticated()
        let sent = h.sent.count
        h.command(.getAuthorization(resource: "Live"))
        #expect(h.requests(since: sent) == [.authorize(mvpd: "Cablevision", resource: "Live")])
    }

    @Test(arguments: [
        (APIProfile.v2, "authenticated_profile_missing"),
        (APIProfile.v2, "authenticated_profile_expired"),
        (APIProfile.v1, "authentication_session_missing"),
    ])
    func backendThatNoLongerKnowsTheProfileLogsTheDeviceOut(profile: APIProfile, code: String) {
        var h = EngineHarness.authenticated(profile: profile)
        let guid = Self.guid(h)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "Live"))
        let error = EnhancedError(status: 403, code: code, message: "User not Authenticated")
        h.respond(.failure(.http(status: 403, retryAfter: nil, error: error)))
        #expect(
            h.events(since: mark) == [
                .setAuthenticationStatus(0, "User Not Authenticated Error"),
                .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: "User not Authenticated"),
                .sendTrackingData(
                    .authorizationDetection,
                    ["NO", "Cablevision", guid, "NO", "User Not Authenticated Error", "User not Authenticated", "unknown", "ios", "tvOS"]
                ),
            ]
        )
        #expect(guid.count == 32)
        #expect(h.engine.snapshot.profile == nil)
        #expect(h.engine.snapshot.phase == .ready)
        #expect(h.persisted.last?.profile == nil)
        // Credentials survive: the next login does not register again.
        #expect(h.engine.snapshot.credentials != nil)
    }

    @Test(arguments: [
        (BackendFailure.transport("connection refused"), "Z120", "network error: connection refused"),
        (BackendFailure.http(status: 503, retryAfter: nil, error: nil), "Z120", "HTTP 503"),
        (BackendFailure.malformed(status: 200, reason: "body is not JSON"), "Z120", "malformed answer (HTTP 200): body is not JSON"),
        (BackendFailure.http(status: 429, retryAfter: .seconds(1), error: nil), "Z100", "HTTP 429"),
        (
            BackendFailure.http(status: 400, retryAfter: nil, error: EnhancedError(status: 400, code: "invalid_parameter_resources")), "Z130",
            "HTTP 400 invalid_parameter_resources"
        ),
    ])
    func failedAuthorizationIsAGenericAuthorizationError(failure: BackendFailure, errorID: String, description: String) {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "Live"))
        h.respondUntilRetriesRunOut(failure)
        #expect(
            h.events(since: mark) == [
                .status(StatusID(rawValue: errorID), level: .error, message: description, extra: ["resource": "Live"]),
                .tokenRequestFailed("Live", errorCode: "Generic Authorization Error", errorDescription: description),
                Self.tracking(h, success: false, error: "Generic Authorization Error", details: description),
            ]
        )
        #expect(h.engine.isAuthenticated)
        #expect(h.outstanding == nil)
    }

    @Test func authorizationTTLIsRememberedForMetadata() {
        var h = EngineHarness.authenticated()
        h.command(.getMetadata(["opCode": 1, "resource_id": "Live"]))
        #expect(h.events.last == .setMetadataStatus(.null, encrypted: false, key: 1, arguments: ["opCode": 1, "resource_id": "Live"]))
        h.command(.checkAuthorization(resource: "Live"))
        Self.grant(&h, "Live", profile: .v2)
        h.command(.getMetadata(["opCode": 1, "resource_id": "Live"]))
        #expect(
            h.events.last
                == .setMetadataStatus(
                    .string(String(Self.authorizationExpiry)),
                    encrypted: false,
                    key: 1,
                    arguments: ["opCode": 1, "resource_id": "Live"]
                )
        )
    }

    @Test func authorizationsWaitTheirTurnBehindAPollInFlight() {
        var h = EngineHarness.authenticated()
        h.command(.setSelectedProvider("DTV"))  // a new login while authenticated: a code, then a poll
        h.respondWithCode("NEW0001")
        #expect(h.outstanding?.request.name == "profiles.code")
        h.command(.checkAuthorization(resource: "Live"))
        #expect(h.outstanding?.request.name == "profiles.code")
        h.respond(.success(.profile(nil)))
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
    }

    @Test func logoutBeforeAQueuedAuthorizationIsSentAnswersItAsNotAuthenticated() {
        var h = EngineHarness.authenticated()
        h.command(.checkPreauthorizedResources(["Live"]))
        h.command(.checkAuthorization(resource: "Live"))  // queued behind the preauthorization
        h.command(.logout)  // queued too, but drops the profile at once
        h.respond(.success(.preauthorization([AuthorizationDecision(resource: "Live", authorized: true)])))
        #expect(
            h.events.suffix(3) == [
                .preauthorizedResources(["Live"]),
                .setAuthenticationStatus(0, "User Not Authenticated Error"),
                .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: ""),
            ]
        )
        #expect(h.outstanding?.request == .logout(mvpd: "Cablevision"))
    }
}
