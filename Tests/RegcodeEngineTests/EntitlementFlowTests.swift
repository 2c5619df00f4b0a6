import Foundation
import RegcodeEngine
import Testing

/// Flows 10–12 and 8 of access-enabler-api.md §7 (preauthorization, metadata, selected provider,
/// logout) on REST v2 and v1, plus `setOptions`.
@Suite struct EntitlementFlowTests {
    // MARK: Preauthorization

    @Test(arguments: APIProfile.allCases)
    func preauthorizationReportsTheGrantedResourcesInTheAskedOrder(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let mark = h.events.count
        h.command(.checkPreauthorizedResources(["Sports", "Live", "Movies"]))
        #expect(h.outstanding?.request == .preauthorize(mvpd: "Cablevision", resources: ["Sports", "Live", "Movies"]))
        h.respond(
            .success(
                .preauthorization([
                    AuthorizationDecision(resource: "Live", authorized: true),
                    AuthorizationDecision(resource: "Movies", authorized: false, error: EnhancedError(code: "preauthorization_denied_by_mvpd")),
                    AuthorizationDecision(resource: "Sports", authorized: true),
                ])
            )
        )
        #expect(
            h.events(since: mark) == [
                .preauthorizedResources(
                    ["Sports", "Live"],
                    errors: [ResourceError(resource: "Movies", error: EnhancedError(code: "preauthorization_denied_by_mvpd"))]
                )
            ]
        )
    }

    @Test(arguments: APIProfile.allCases)
    func preauthorizationWithoutLoginIsEmptyAndAsksNothing(profile: APIProfile) {
        var h = EngineHarness(profile: profile)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let (mark, sent) = (h.events.count, h.sent.count)
        h.command(.checkPreauthorizedResources(["Live"]))
        #expect(h.events(since: mark) == [.preauthorizedResources([])])
        #expect(h.sent.count == sent)
    }

    @Test(arguments: [
        BackendFailure.http(status: 403, retryAfter: nil, error: EnhancedError(status: 403, code: "too_many_resources")),
        BackendFailure.http(status: 429, retryAfter: nil, error: nil),
        BackendFailure.transport("timeout after 30 seconds"),
    ])
    func failedPreauthorizationReportsP100AndNothingAuthorized(failure: BackendFailure) {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.checkPreauthorizedResources(["Live"]))
        h.respondUntilRetriesRunOut(failure)
        let events = h.events(since: mark)
        #expect(events.map(\.statusErrorID) == ["P100", nil])
        #expect(events.last == .preauthorizedResources([]))
        #expect(h.engine.isAuthenticated)
    }

    @Test func preauthorizationTheBackendRefusesForWantOfAProfileLogsOut() {
        var h = EngineHarness.authenticated(profile: .v1)
        let mark = h.events.count
        h.command(.checkPreauthorizedResources(["Live"]))
        h.respond(.failure(.http(status: 412, retryAfter: nil, error: EnhancedError(status: 412, code: "authentication_session_missing"))))
        #expect(h.events(since: mark) == [.setAuthenticationStatus(0, "User Not Authenticated Error"), .preauthorizedResources([])])
        #expect(h.engine.snapshot.profile == nil)
    }

    // MARK: Metadata

    @Test(arguments: APIProfile.allCases)
    func staticMetadataIsAnsweredLocallyWithTheKeyDictionaryEchoed(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let (mark, sent) = (h.events.count, h.sent.count)
        h.command(.getMetadata(["opCode": 0]))
        h.command(.getMetadata(["opCode": 1, "resource_id": "Live"]))
        h.command(.getMetadata(["opCode": 2]))
        #expect(
            h.events(since: mark) == [
                .setMetadataStatus(.string(String(EngineHarness.approved.expiresEpochMs)), encrypted: false, key: 0, arguments: ["opCode": 0]),
                .setMetadataStatus(.null, encrypted: false, key: 1, arguments: ["opCode": 1, "resource_id": "Live"]),
                .setMetadataStatus("device-1", encrypted: false, key: 2, arguments: ["opCode": 2]),
            ]
        )
        #expect(h.sent.count == sent)
    }

    @Test(arguments: APIProfile.allCases)
    func userMetadataIsReadFromTheBackendWithItsEncryptionFlag(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let mark = h.events.count
        let metadata = UserMetadata(
            values: ["zip": ["10001", "10002"], "maxRating": ["MPAA": "R", "VCHIP": "TV-MA"], "encryptedZip": "MTAwMDE="],
            encrypted: ["encryptedZip"]
        )
        for name in ["zip", "encryptedZip", "householdID"] {
            h.command(.getMetadata(["opCode": 3, "user_metadata_name": .string(name)]))
            #expect(h.outstanding?.request == .userMetadata(mvpd: "Cablevision"))
            h.respond(.success(.userMetadata(metadata)))
        }
        #expect(
            h.events(since: mark) == [
                .setMetadataStatus(["10001", "10002"], encrypted: false, key: 3, arguments: ["opCode": 3, "user_metadata_name": "zip"]),
                .setMetadataStatus("MTAwMDE=", encrypted: true, key: 3, arguments: ["opCode": 3, "user_metadata_name": "encryptedZip"]),
                .setMetadataStatus(.null, encrypted: false, key: 3, arguments: ["opCode": 3, "user_metadata_name": "householdID"]),
            ]
        )
    }

    @Test func metadataOfAnUnauthenticatedDeviceIsNullExceptTheDeviceID() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let (mark, sent) = (h.events.count, h.sent.count)
        h.command(.getMetadata(["opCode": 0]))
        h.command(.getMetadata(["opCode": 2]))
        h.command(.getMetadata(["opCode": 3, "user_metadata_name": "zip"]))
        h.command(.getMetadata(["opCode": 7]))
        #expect(
            h.events(since: mark) == [
                .setMetadataStatus(.null, encrypted: false, key: 0, arguments: ["opCode": 0]),
                .setMetadataStatus("device-1", encrypted: false, key: 2, arguments: ["opCode": 2]),
                .setMetadataStatus(.null, encrypted: false, key: 3, arguments: ["opCode": 3, "user_metadata_name": "zip"]),
                .setMetadataStatus(.null, encrypted: false, key: 7, arguments: ["opCode": 7]),
            ]
        )
        #expect(h.sent.count == sent)
    }

    @Test func userMetadataFailureIsAnEmptyAnswer() {
        var h = EngineHarness.authenticated()
        h.command(.getMetadata(["opCode": 3, "user_metadata_name": "zip"]))
        h.respondUntilRetriesRunOut(.http(status: 429, retryAfter: nil, error: nil))
        #expect(h.events.last == .setMetadataStatus(.null, encrypted: false, key: 3, arguments: ["opCode": 3, "user_metadata_name": "zip"]))
        h.command(.getMetadata(["opCode": 3, "user_metadata_name": "zip"]))
        h.respond(.success(.userMetadata(nil)))  // the backend holds no profile any more
        #expect(
            h.events.suffix(2) == [
                .setAuthenticationStatus(0, "User Not Authenticated Error"),
                .setMetadataStatus(.null, encrypted: false, key: 3, arguments: ["opCode": 3, "user_metadata_name": "zip"]),
            ]
        )
    }

    // MARK: Selected provider and logout

    @Test(arguments: APIProfile.allCases)
    func selectedProviderFollowsLoginAndLogout(profile: APIProfile) {
        var h = EngineHarness(profile: profile)
        h.command(.getSelectedProvider)
        #expect(h.events.last == .selectedProvider(nil))
        h.startLogin()
        h.respond(.success(.profile(EngineHarness.approved)))
        h.command(.getSelectedProvider)
        #expect(h.events.last == .selectedProvider(MVPD(id: "Cablevision", displayName: "Optimum")))
        h.command(.logout)
        h.respond(.success(.loggedOut))
        h.command(.getSelectedProvider)
        #expect(h.events.last == .selectedProvider(nil))
    }

    @Test(arguments: APIProfile.allCases)
    func logoutForgetsTheProfileCallsTheBackendAndReportsNotAuthenticated(profile: APIProfile) {
        var h = EngineHarness.authenticated(profile: profile)
        let credentials = h.engine.snapshot.credentials
        let mark = h.events.count
        h.command(.logout)
        // Tokens are cleared before the backend is told (as AccessEnabler does), and that is stored.
        #expect(h.outstanding?.request == .logout(mvpd: "Cablevision"))
        #expect(h.engine.snapshot.profile == nil)
        #expect(h.persisted.last?.profile == nil)
        #expect(h.events.count == mark)
        h.respond(.success(.loggedOut))
        #expect(h.events(since: mark) == [.setAuthenticationStatus(0, "User Not Authenticated Error")])
        #expect(h.engine.snapshot.phase == .ready)
        #expect(h.engine.snapshot.credentials == credentials)
        #expect(credentials != nil)
        h.command(.checkAuthentication)
        #expect(h.events.suffix(2).first == .setAuthenticationStatus(0, "User Not Authenticated Error"))
    }

    @Test func logoutThatFailsStillLogsOutLocally() {
        var h = EngineHarness.authenticated()
        let mark = h.events.count
        h.command(.logout)
        h.respondUntilRetriesRunOut(.transport("connection refused"))
        #expect(h.events(since: mark) == [.setAuthenticationStatus(0, "User Not Authenticated Error")])
        #expect(!h.engine.isAuthenticated)
    }

    @Test func logoutOfAnUnauthenticatedDeviceAnswersWithoutACall() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let sent = h.sent.count
        h.command(.logout)
        #expect(h.events.last == .setAuthenticationStatus(0, "User Not Authenticated Error"))
        #expect(h.sent.count == sent)
    }

    @Test func logoutDuringALoginStopsPolling() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(nil)))
        h.command(.logout)
        #expect(h.timers.isEmpty)
        #expect(h.engine.snapshot.code == nil)
        #expect(h.events.last == .setAuthenticationStatus(0, "User Not Authenticated Error"))
        #expect(!h.engine.isPolling)
    }

    // MARK: Options

    @Test func optionsReachEveryRequest() {
        var h = EngineHarness.authenticated()
        h.command(.setOptions(["visitorID": "ecid-123", "device_info": "eyJtb2RlbCI6IlRWIn0="]))
        h.command(.checkAuthorization(resource: "Live"))
        #expect(h.outstanding?.context.visitorID == "ecid-123")
        #expect(h.outstanding?.context.deviceInfo == "eyJtb2RlbCI6IlRWIn0=")
    }
}
