import AccessEnablerAPI
import RegcodeEngine
import RegcodeSupport
import Testing

/// Every stage of a device's life survives a backend that throttles, fails and forgets: transient
/// failures are retried with back-off, bounded per stage, and only a spent bound is reported, with
/// the status id of the stage that failed.
@Suite struct HostileBackendTests {
    static let throttled = BackendFailure.http(status: 429, retryAfter: nil, error: nil)

    @Test(arguments: [
        BackendFailure.http(status: 429, retryAfter: nil, error: nil),
        BackendFailure.http(status: 503, retryAfter: nil, error: nil),
        BackendFailure.transport("connection reset"),
    ])
    func registrationRetriesTransientFailuresAndThenSucceeds(failure: BackendFailure) {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        #expect(h.outstanding?.request.name == "register")
        for _ in 0..<3 {
            h.respond(.failure(failure))
            #expect(h.outstanding == nil)
            #expect(h.timers[.retry] != nil)
            h.fireNextTimer()
            #expect(h.outstanding?.request.name == "register")
        }
        h.answerHousekeeping()
        #expect(h.events == [.setRequestorComplete(1)])
        #expect(h.requestLog.filter { $0.stage == .registration }.map(\.outcome).suffix(1) == [.ok])
        #expect(h.requestLog.filter { $0.stage == .registration }.count == 4)
    }

    @Test func throttledRegistrationWhoseBoundIsSpentIsCFG429NotR400() {
        var policy = PollPolicy()
        policy.stageRetries = 3
        var h = EngineHarness(policy: policy)
        h.command(.setRequestor(signingKeys: nil))
        let sends = h.respondUntilRetriesRunOut(Self.throttled)
        #expect(sends == 4)
        #expect(h.events.map(\.statusErrorID) == ["CFG429", nil])
        #expect(h.events.last == .setRequestorComplete(0))
        #expect(h.requestLog.map(\.outcome) == [.throttled, .throttled, .throttled, .throttled])
        #expect(h.requestLog.map(\.retryDelayMs).map { $0 != nil } == [true, true, true, false])
    }

    @Test func aRefusedRegistrationIsStillR400() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.respond(.failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "unapproved_software_statement"))))
        #expect(h.events.map(\.statusErrorID) == ["R400", nil])
        #expect(h.timers[.retry] == nil)
    }

    @Test func retriesWaitAtLeastOneSecondAndRetryAfterAfterA429() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        for retryAfter in [nil, Duration.seconds(7), .milliseconds(10)] {
            let answeredAt = h.now.advanced(by: .milliseconds(20))
            h.respond(.failure(.http(status: 429, retryAfter: retryAfter, error: nil)))
            let wait = answeredAt.duration(to: h.timers[.retry]!)
            #expect(wait >= .seconds(1))
            #expect(wait >= (retryAfter ?? .zero))
            h.fireNextTimer()
            #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        }
    }

    @Test func stageBackOffIsFullJitterWithinADoublingCappedWindow() {
        var policy = PollPolicy()
        policy.stageBackoffBase = .seconds(1)
        policy.stageBackoffCap = .seconds(8)
        var rng = SplitMix64(seed: 3)
        for attempt in 1...8 {
            let ceiling = min(Duration.seconds(1) * (1 << (attempt - 1)), .seconds(8))
            for _ in 0..<50 {
                let delay = policy.stageRetryDelay(throttled: false, retryAfter: nil, attempt: attempt, using: &rng)
                #expect(delay >= .seconds(1) && delay <= ceiling)
            }
        }
    }

    @Test func onlyOneRequestIsInFlightWhileOthersWaitBehindARetry() {
        var h = EngineHarness.authenticated()
        h.command(.checkAuthorization(resource: "Live"))
        h.respond(.failure(.http(status: 503, retryAfter: nil, error: nil)))
        // The harness traps on a second send; a queued call waits behind the armed retry.
        h.command(.checkPreauthorizedResources(["Live"]))
        #expect(h.outstanding == nil)
        h.fireNextTimer()
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
        h.respond(.success(.authorization(AuthorizationDecision(resource: "Live", authorized: false))))
        #expect(h.outstanding?.request == .preauthorize(mvpd: "Cablevision", resources: ["Live"]))
    }

    @Test func forgottenClientCredentialsRegisterAgainOnce() {
        var h = EngineHarness()
        h.startLogin(codeTTL: .seconds(30000))
        h.respond(.success(.profile(nil)))
        // The token expires; the backend no longer knows the client.
        h.clock.advance(by: .seconds(21600))
        h.timers[.poll] = nil
        h.apply(h.engine.timerFired(.poll))
        #expect(h.outstanding?.request.name == "token")
        h.respond(.failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "invalid_client"))))
        #expect(h.outstanding?.request.name == "register")
        #expect(h.engine.snapshot.credentials == nil)
        h.respond(.success(.registered(ClientCredentials(clientID: "client-2", clientSecret: "secret-2"))))
        h.respond(.success(.accessToken(token: "t2", expiresIn: .seconds(21600))))
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        #expect(h.engine.snapshot.credentials?.clientID == "client-2")
        #expect(h.requestLog.filter { $0.stage == .registration && $0.outcome == .ok }.count == 2)
    }

    @Test func aForgottenCodeGetsANewSessionAndANewREGCODEBounded() {
        var policy = PollPolicy()
        policy.codeRecoveries = 2
        var h = EngineHarness(policy: policy)
        h.startLogin(code: "FIRST01")
        let unknown = BackendFailure.http(status: 400, retryAfter: nil, error: EnhancedError(status: 400, code: "invalid_authentication_session"))
        h.respond(.failure(unknown))
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respondWithCode("SECOND2")
        h.respond(.failure(unknown))
        h.respondWithCode("THIRD03")
        h.respond(.failure(unknown))
        let codes = h.events.compactMap { $0.statusErrorID == "REGCODE" ? $0.args["statusDictionary"]?["message"]?.stringValue : nil }
        #expect(codes == ["FIRST01", "SECOND2", "THIRD03"])
        #expect(h.endedCodes.map(\.code) == ["FIRST01", "SECOND2", "THIRD03"])
        // The bound is spent: the third dead code ends the login.
        #expect(!h.engine.isPolling)
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func aFourHundredThatRetryingCannotFixEndsPollingWithAdobesCode() {
        var h = EngineHarness()
        h.startLogin()
        let error = EnhancedError(status: 400, code: "invalid_parameter_service_provider", action: "none")
        h.respond(.failure(.http(status: 400, retryAfter: nil, error: error)))
        #expect(!h.engine.isPolling)
        let status = h.events.first { $0.statusErrorID == "REG500" }
        #expect(status?.args["statusDictionary"]?["details"]?.stringValue == "invalid_parameter_service_provider")
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func aFourHundredWithActionRetryKeepsPolling() {
        var h = EngineHarness()
        h.startLogin()
        let error = EnhancedError(status: 403, code: "network_connection_timeout", action: "retry")
        h.respond(.failure(.http(status: 403, retryAfter: nil, error: error)))
        #expect(h.engine.isPolling)
        #expect(h.timers[.poll] != nil)
    }

    @Test func transientFailuresOfEveryStageAreLoggedByStage() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.respond(.failure(Self.throttled))
        h.fireNextTimer()
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        h.respond(.failure(.http(status: 502, retryAfter: nil, error: nil)))
        h.fireNextTimer()
        h.respondWithCode("ABC1234")
        let log = h.requestLog.map { "\($0.stage.rawValue):\($0.outcome.rawValue)" }
        #expect(
            log == [
                "registration:throttled", "registration:ok", "token:ok", "configuration:ok", "session:server-error", "session:ok",
            ]
        )
    }
}

/// A throttled SDK call reaches the app as the SDK's status at once (Adobe's throttling page, "SDK implementation
/// disambiguation"); a native app retries at most twice, a second or more apart.
@Suite struct ThrottledCallTests {
    static let throttled = BackendFailure.http(status: 429, retryAfter: nil, error: nil)

    @Test func aThrottledSetRequestorIsCFG429AtOnce() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.setRequestor(signingKeys: nil))
        let sends = h.respondUntilRetriesRunOut(Self.throttled)
        #expect(sends == 1)
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["CFG429", nil])
    }

    @Test func aThrottledAuthorizationIsZ100AndPreauthorizationP100AtOnce() {
        var h = EngineHarness.authenticated()
        h.command(.getAuthorization(resource: "Live"))
        #expect(h.respondUntilRetriesRunOut(Self.throttled) == 1)
        #expect(h.events.contains { $0.statusErrorID == "Z100" })
        h.command(.checkPreauthorizedResources(["Live"]))
        #expect(h.respondUntilRetriesRunOut(Self.throttled) == 1)
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["P100", nil])
        #expect(h.timers[.retry] == nil)
    }

    @Test func aNativeAppRetriesAThrottledCallTwiceAtMost() {
        var h = EngineHarness { $0.persona = .restV2 }
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .launchProfiles(mvpd: nil))
        #expect(h.respondUntilRetriesRunOut(Self.throttled) == 3)
        #expect(h.events.filter { if case .app(.throttled) = $0 { true } else { false } }.count == 2)
        guard case .app(.callFailed(let call, let error, _))? = h.events.last else {
            Issue.record("no app.callFailed: \(h.eventNames)")
            return
        }
        #expect(call == "profiles" && error == nil)
    }
}
