import AccessEnablerAPI
import Foundation
import RegcodeEngine
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// The legacy v1 profile: startup, login and cancel (flows 1, 3, 7), DCR or HMAC, signature refusals,
/// and the "backend already knows this device" paths of both APIs.
@Suite struct V1ProfileTests {
    static let keys = SigningKeys(publicKey: "samplePublicKey", secret: "sampleSecretKey")

    @Test func hmacDeviceStartsWithoutRegisteringAndSignsEveryCall() {
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.command(.setRequestor(signingKeys: nil))
        #expect(h.outstanding?.request == .configuration)
        #expect(h.outstanding?.context.signingKeys == Self.keys)
        #expect(h.outstanding?.context.accessToken == nil)
        #expect(h.outstanding?.context.profile == .v1)
        h.answerHousekeeping()
        #expect(h.events == [.setRequestorComplete(1)])
        #expect(h.sent.map(\.request.name) == ["configuration"])
    }

    @Test func setRequestorKeysReplaceTheConfiguredOnesAndStayInMemory() throws {
        var h = EngineHarness(profile: .v1, signingKeys: SigningKeys(publicKey: "configured", secret: "configured-secret"))
        let given = SigningKeys(publicKey: "given", secret: "given-secret-9")
        h.command(.setRequestor(signingKeys: given))
        let context = try #require(h.outstanding?.context)
        #expect(context.signingKeys == given)
        // Interpolation (logs, failure messages) never shows the secret.
        #expect(!"\(context)".contains("given-secret-9"))
        #expect(!"\(given)".contains("given-secret-9"))
        h.answerHousekeeping()
        // A later setRequestor without keys keeps them.
        h.command(.setRequestor(signingKeys: nil))
        #expect(h.outstanding?.context.signingKeys == given)
        h.answerHousekeeping()
        let stored = try h.persisted.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }.joined()
        #expect(!h.persisted.isEmpty)
        #expect(!stored.contains("given-secret-9"))
    }

    @Test(arguments: [false, true])
    func loginOnV1EmitsTheSameCallbacksAsOnV2(hmac: Bool) {
        var h = EngineHarness(profile: .v1, signingKeys: hmac ? Self.keys : nil)
        h.startLogin()
        h.respond(.success(.profile(nil)))
        h.fireNextTimer()
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(
            h.eventNames == [
                "setRequestorComplete", "setAuthenticationStatus", "sendTrackingData", "displayProviderDialog",
                "sendTrackingData", "status", "setAuthenticationStatus", "sendTrackingData",
            ]
        )
        #expect(h.events[4] == .sendTrackingData(.mvpdSelection, ["Cablevision", "unknown", "ios", "tvOS"]))
        #expect(h.events[5].statusErrorID == "REGCODE")
        #expect(h.events[6] == .setAuthenticationStatus(1, ""))
        let dcr = hmac ? [] : ["register", "token"]
        #expect(h.sent.map(\.request.name) == dcr + ["configuration", "checkauthn", "sessions", "profiles.code", "profiles.code"])
        #expect(h.engine.snapshot.phase == .authenticated)
    }

    @Test func cancelOnV1StopsPolling() {
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.startLogin()
        h.respond(.success(.profile(nil)))
        h.command(.setSelectedProvider(nil))
        #expect(h.events.last == .setAuthenticationStatus(0, "Provider Not Selected Error"))
        #expect(h.timers.isEmpty)
        #expect(h.outstanding == nil)
    }

    @Test func v1GoneTokenWhileAFreshCodeIsLiveIsPending() {
        // tokens/authn 410 speaks of an expired token of an earlier login, not of the fresh code.
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.startLogin()
        h.respond(.failure(.http(status: 410, retryAfter: nil, error: nil)))
        #expect(h.polls.last?.outcome == .pending)
        #expect(h.engine.isPolling)
        #expect(h.timers[.poll] != nil)
        #expect(!h.events.contains { $0.statusErrorID == "REG410" })
    }

    @Test func v1DeviceTheBackendAlreadyKnowsIsAuthenticatedWithoutACode() {
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let mark = h.events.count
        h.command(.getAuthentication(mvpd: "Cablevision"))
        #expect(h.outstanding?.request == .checkAuthentication)
        h.respond(.success(.authenticationStatus(true)))
        #expect(h.outstanding?.request == .fetchProfile(mvpd: "Cablevision"))
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.events(since: mark).map(\.name) == ["sendTrackingData", "setAuthenticationStatus", "sendTrackingData"])
        #expect(h.events.suffix(2).first == .setAuthenticationStatus(1, ""))
        #expect(!h.sent.contains { $0.request.name == "sessions" })
        #expect(h.engine.snapshot.profile == EngineHarness.approved)
    }

    @Test func v2SessionsAnsweringAuthorizeAdoptsTheExistingProfile() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        let mark = h.events.count
        h.command(.getAuthentication(mvpd: "Cablevision"))
        h.respond(.success(.alreadyAuthenticated(mvpd: "Cablevision")))
        #expect(h.outstanding?.request == .fetchProfile(mvpd: "Cablevision"))
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.events(since: mark).map(\.name) == ["sendTrackingData", "setAuthenticationStatus", "sendTrackingData"])
        #expect(!h.events.contains { $0.statusErrorID == "REGCODE" })
        #expect(h.engine.snapshot.phase == .authenticated)
    }

    @Test func v2SessionsAnsweringAuthorizeWithoutAProfileIsREG500() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        h.respond(.success(.alreadyAuthenticated(mvpd: "Cablevision")))
        h.respond(.success(.profile(nil)))
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["REG500", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func v1MediaTokenStepWithoutATokenFailsInsteadOfAskingAgain() {
        var h = EngineHarness.authenticated(profile: .v1)
        h.command(.checkAuthorization(resource: "Live"))
        h.respond(.success(.authorization(AuthorizationDecision(resource: "Live", authorized: true))))
        #expect(h.outstanding?.request == .mediaToken(mvpd: "Cablevision", resource: "Live"))
        h.respond(.success(.authorization(AuthorizationDecision(resource: "Live", authorized: true))))
        #expect(h.outstanding == nil)
        #expect(h.events.suffix(3).map(\.statusErrorID) == ["Z120", nil, nil])
        #expect(h.events.suffix(2).first?.name == "tokenRequestFailed")
    }

    // MARK: Refused signatures

    @Test func refusedSignatureOnTheCodeRequestIsSEC403ThenREG500() {
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        let refused = BackendFailure.http(status: 401, retryAfter: nil, error: nil)
        h.respond(.failure(refused))  // checkauthn
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respond(.failure(refused))
        #expect(h.events.suffix(3).map(\.statusErrorID) == ["SEC403", "REG500", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.events.suffix(3).first == .status(StatusID(rawValue: "SEC403"), level: .error, message: "request signature refused (HTTP 401)"))
        // No token to refresh: nothing else went out.
        #expect(h.sent.map(\.request.name) == ["configuration", "checkauthn", "sessions"])
        #expect(h.outstanding == nil)
    }

    @Test func refusedSignatureWhilePollingStopsTheLoopWithSEC403() {
        var h = EngineHarness(profile: .v1, signingKeys: Self.keys)
        h.startLogin()
        h.respond(.failure(.http(status: 401, retryAfter: nil, error: nil)))
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["SEC403", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.polls.last?.outcome == .unauthorized)
        #expect(h.timers.isEmpty)
        #expect(!h.sent.contains { $0.request.name == "token" })
    }

    @Test func refusedSignatureOnAnAuthorizationIsSEC403() {
        var h = EngineHarness.authenticated(profile: .v1, signingKeys: Self.keys)
        let mark = h.events.count
        h.command(.checkAuthorization(resource: "Live"))
        h.respond(.failure(.http(status: 401, retryAfter: nil, error: nil)))
        #expect(h.events(since: mark).map(\.name) == ["status", "tokenRequestFailed", "sendTrackingData"])
        #expect(h.events(since: mark).first?.statusErrorID == "SEC403")
        #expect(h.events(since: mark)[1] == .tokenRequestFailed("Live", errorCode: "Generic Authorization Error", errorDescription: "HTTP 401"))
    }

    @Test func unsignedDeviceSaysItHasNoKeys() {
        var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
        settings.profile = .v1
        let clock = ManualClock()
        var engine = DeviceEngine(settings: settings, deviceID: "device-1", clock: clock, seed: 1)
        var sent: [(RequestID, BackendRequest)] = []
        var events: [DeviceEvent] = []
        func absorb(_ actions: [DeviceAction]) {
            for action in actions {
                if case .send(let id, let request, _) = action { sent.append((id, request)) }
                if case .emit(let event) = action { events.append(event) }
            }
        }
        absorb(engine.handle(.setRequestor(signingKeys: nil)))
        let timing = RequestTiming(sentAt: clock.now, latency: .zero)
        absorb(engine.handle(response: .success(.configuration(mvpds: EngineHarness.mvpds)), for: sent[0].0, timing: timing))
        absorb(engine.handle(.getAuthentication(mvpd: "Cablevision")))
        absorb(engine.handle(response: .success(.authenticationStatus(false)), for: sent[1].0, timing: timing))
        absorb(engine.handle(response: .failure(.http(status: 401, retryAfter: nil, error: nil)), for: sent[2].0, timing: timing))
        #expect(
            events.contains(
                .status(StatusID(rawValue: "SEC403"), level: .error, message: "no signing keys: setRequestor needs a secret and public key")
            )
        )
    }

    // MARK: Secrets

    @Test(arguments: [false, true])
    func noSecretEverReachesAnEventOrTheSnapshot(hmac: Bool) throws {
        var h = EngineHarness(profile: hmac ? .v1 : .v2, signingKeys: hmac ? Self.keys : nil)
        h.command(.setRequestor(signingKeys: hmac ? SigningKeys(publicKey: "pk", secret: "runtime-secret-7") : nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: nil))
        h.command(.setSelectedProvider("Cablevision"))
        if hmac { h.respond(.success(.authenticationStatus(false))) }
        h.respondWithCode("ABC1234")
        h.respond(.success(.profile(EngineHarness.approved)))
        h.command(.checkAuthorization(resource: "Live"))
        AuthorizationFlowTests.grant(&h, "Live", profile: hmac ? .v1 : .v2)
        h.command(.getMetadata(["opCode": 3, "user_metadata_name": "zip"]))
        h.respond(.success(.userMetadata(UserMetadata(values: ["zip": "10001"]))))
        h.command(.logout)
        h.respond(.success(.loggedOut))

        let encoder = JSONEncoder()
        let events = h.events.map { JSONWriter.text(.object($0.args)) }.joined(separator: "\n")
        let snapshots = try h.persisted.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n")
        let secrets = hmac ? ["sampleSecretKey", "runtime-secret-7"] : [EngineHarness.statement, "secret-1", "token-"]
        for secret in secrets {
            #expect(!events.contains(secret), "an event carries \(secret)")
        }
        if hmac {
            for secret in secrets { #expect(!snapshots.contains(secret), "the snapshot carries \(secret)") }
        }
        // The media token is what setToken is for; it is the only token an event carries.
        #expect(h.events.contains(.setToken(AuthorizationFlowTests.token, resource: "Live")))
    }
}
