import RegcodeEngine
import Testing

@Suite struct LoginFlowTests {
    @Test func loginEmitsTheDocumentedCallbacksInOrder() {
        var h = EngineHarness()
        h.startLogin()
        // The first poll goes out at once, before any timer.
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        h.respond(.success(.profile(nil)))
        h.fireNextTimer()
        h.respond(.success(.profile(EngineHarness.approved)))

        #expect(
            h.eventNames == [
                "setRequestorComplete", "setAuthenticationStatus", "sendTrackingData", "displayProviderDialog",
                "sendTrackingData", "status", "setAuthenticationStatus", "sendTrackingData",
            ]
        )
        #expect(h.events[0] == .setRequestorComplete(1))
        #expect(h.events[1] == .setAuthenticationStatus(0, "User Not Authenticated Error"))
        #expect(h.events[2].args["eventName"] == "authenticationDetection")
        #expect(h.events[3] == .displayProviderDialog(EngineHarness.mvpds))
        #expect(h.events[4] == .sendTrackingData(.mvpdSelection, ["Cablevision", "unknown", "ios", "tvOS"]))
        let status = h.events[5].args["statusDictionary"]
        #expect(status?["errorId"] == "REGCODE")
        #expect(status?["level"] == "success")
        #expect(status?["message"] == "ABC1234")
        let issued = h.persisted.compactMap(\.code).first
        #expect(issued?.code == "ABC1234")
        #expect(status?["expires"] == issued.map { .int($0.expiresEpochMs) })
        #expect(h.events[6] == .setAuthenticationStatus(1, ""))
        let tracking = h.events[7].args["data"]?.arrayValue
        #expect(h.events[7].args["eventName"] == "authenticationDetection")
        #expect(tracking?.first == "YES")
        #expect(tracking?[1] == "Cablevision")
        #expect(h.engine.snapshot.phase == .authenticated)
        #expect(h.engine.snapshot.code == nil)
        #expect(h.timers.isEmpty)
        #expect(h.outstanding == nil)
        #expect(h.polls.map(\.outcome) == [.pending, .authenticated])
    }

    @Test func dcrRegistersOnceThenTokenThenConfiguration() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        #expect(h.sent.map(\.request.name) == ["register", "token", "configuration"])
        #expect(h.engine.snapshot.credentials == ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))
        #expect(h.engine.snapshot.mvpds == EngineHarness.mvpds)
        #expect(h.events == [.setRequestorComplete(1)])
    }

    @Test func callsBeforeSetRequestorCompletesAreQueued() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.command(.checkAuthentication)
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.events.isEmpty)
        h.answerHousekeeping()
        #expect(h.eventNames == ["setRequestorComplete", "setAuthenticationStatus", "sendTrackingData", "displayProviderDialog"])
    }

    @Test func presetMVPDSkipsThePicker() {
        var h = EngineHarness(presetMVPD: "DTV")
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: nil))
        #expect(!h.eventNames.contains("displayProviderDialog"))
        #expect(h.outstanding?.request == .createSession(mvpd: "DTV"))
    }

    @Test func setRequestorReportsRegistrationAndConfigurationFailures() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.respond(.failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "invalid_software_statement"))))
        #expect(h.events.map(\.statusErrorID) == ["R400", nil])
        #expect(h.events.last == .setRequestorComplete(0))

        var g = EngineHarness()
        g.command(.setRequestor(signingKeys: nil))
        g.answerHousekeeping()  // registers, gets a token
        #expect(g.events == [.setRequestorComplete(1)])
        g.command(.setRequestor(signingKeys: nil))
        g.respondUntilRetriesRunOut(.http(status: 503, retryAfter: nil, error: nil))
        #expect(g.events.suffix(2).map(\.statusErrorID) == ["CFG503", nil])
        #expect(g.events.last == .setRequestorComplete(0))
    }

    @Test func noCodeObtainableReportsREG500AfterBoundedRetries() {
        var policy = PollPolicy()
        policy.codeRequestRetries = 1
        var h = EngineHarness(policy: policy)
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        h.respond(.failure(.http(status: 500, retryAfter: nil, error: nil)))
        #expect(h.timers[.retry] != nil)
        h.fireNextTimer()
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respond(.failure(.transport("connection refused")))
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["REG500", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.engine.snapshot.phase == .ready)
    }

    @Test func cancelStopsPollingAndReportsProviderNotSelected() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(nil)))
        #expect(h.timers[.poll] != nil)
        h.command(.setSelectedProvider(nil))
        #expect(h.timers.isEmpty)
        #expect(h.events.last == .setAuthenticationStatus(0, "Provider Not Selected Error"))
        #expect(h.engine.snapshot.code == nil)
        // Whatever the timers would have done, nothing goes out any more.
        h.clock.advance(by: .seconds(3600))
        h.apply(h.engine.timerFired(.poll))
        h.apply(h.engine.timerFired(.codeExpiry))
        #expect(h.outstanding == nil)
    }

    @Test func cancelWhilePollInFlightAbandonsTheAnswer() {
        var h = EngineHarness()
        h.startLogin()
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        h.command(.setSelectedProvider(nil))
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.polls.last?.outcome == .abandoned)
        #expect(h.events.last == .setAuthenticationStatus(0, "Provider Not Selected Error"))
        #expect(h.engine.snapshot.profile == nil)
        #expect(h.outstanding == nil)
        #expect(h.timers.isEmpty)
    }

    @Test func newCodeReplacesTheOldLoop() {
        var h = EngineHarness()
        h.startLogin(code: "OLD0001")
        h.respond(.success(.profile(nil)))
        h.command(.setSelectedProvider("DTV"))
        #expect(h.timers[.poll] == nil)
        #expect(h.outstanding?.request == .createSession(mvpd: "DTV"))
        h.respondWithCode("NEW0002")
        #expect(h.outstanding?.request == .pollProfile(code: "NEW0002", mvpd: "Cablevision"))
        let codes = h.events.compactMap { $0.args["statusDictionary"]?["message"]?.stringValue }
        #expect(codes == ["OLD0001", "NEW0002"])
        // From here on only the new code is polled.
        for _ in 0..<5 {
            h.respond(.success(.profile(nil)))
            h.fireNextTimer()
        }
        let polled = Set(h.sent.compactMap { if case .pollProfile(let code, _) = $0.request { code } else { nil } })
        #expect(polled == ["OLD0001", "NEW0002"])
        #expect(h.sent.last?.request == .pollProfile(code: "NEW0002", mvpd: "Cablevision"))
    }

    @Test func newCodeWhilePollInFlightStillKeepsOneRequestInFlight() {
        var h = EngineHarness()
        h.startLogin(code: "OLD0001")
        // The old poll is out; selecting again must not send a second request.
        h.command(.setSelectedProvider("DTV"))
        #expect(h.outstanding?.request == .pollProfile(code: "OLD0001", mvpd: "Cablevision"))
        h.respond(.success(.profile(nil)))
        #expect(h.polls.last?.outcome == .abandoned)
        #expect(h.outstanding?.request == .createSession(mvpd: "DTV"))
    }

    @Test func alreadyAuthenticatedGetAuthenticationAnswersAtOnce() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(EngineHarness.approved)))
        let before = h.sent.count
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.sent.count == before)
        #expect(h.events.suffix(2).first == .setAuthenticationStatus(1, ""))
        h.command(.getSelectedProvider)
        #expect(h.events.last == .selectedProvider(MVPD(id: "Cablevision", displayName: "Optimum")))
    }
}
