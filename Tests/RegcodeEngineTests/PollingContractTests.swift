import RegcodeEngine
import RegcodeTestSupport
import Testing

/// Each rule of the polling contract, proven by the waits the engine asks for on a manual clock.
@Suite struct PollingContractTests {
    typealias Instant = ManualClock.Instant

    /// The wait the engine chose after the answer it just got.
    static func armedDelay(_ h: EngineHarness) -> Duration? {
        h.timers[.poll].map { h.now.duration(to: $0) }
    }

    @Test func firstPollIsImmediate() {
        var h = EngineHarness()
        h.startLogin()
        let status = h.events.firstIndex { $0.statusErrorID == "REGCODE" }
        #expect(status != nil)
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        #expect(h.polls.isEmpty)
        h.respond(.success(.profile(nil)), latency: .milliseconds(30))
        let first = h.polls[0]
        #expect(first.plannedEpochMs == first.sentEpochMs)
    }

    @Test func configuredFirstPollDelayIsHonoured() {
        var policy = PollPolicy()
        policy.firstPollDelay = .seconds(2)
        var h = EngineHarness(policy: policy)
        h.startLogin()
        #expect(h.outstanding == nil)
        #expect(Self.armedDelay(h) == .seconds(2))
    }

    @Test(arguments: [UInt64(1), 7, 42, 1234, 99999])
    func intervalCarriesTenPercentJitter(seed: UInt64) {
        var h = EngineHarness(seed: seed)
        h.startLogin()
        var delays: [Duration] = []
        for _ in 0..<40 {
            h.respond(.success(.profile(nil)), latency: .zero)
            delays.append(Self.armedDelay(h)!)
            h.fireNextTimer()
        }
        for delay in delays {
            #expect(delay >= .milliseconds(4500) && delay <= .milliseconds(5500))
        }
        #expect(Set(delays).count > 30, "jitter must vary the interval")
        #expect(delays.contains { $0 < .milliseconds(4900) } && delays.contains { $0 > .milliseconds(5100) })
    }

    @Test func intervalIsMeasuredFromThePlannedTimeNotTheAnswer() {
        var policy = PollPolicy()
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.success(.profile(nil)), latency: .seconds(2))
        #expect(Self.armedDelay(h) == .seconds(3))  // planned t0 + 5 s, answered at t0 + 2 s
        h.fireNextTimer()
        h.respond(.success(.profile(nil)), latency: .seconds(7))
        #expect(Self.armedDelay(h) == .zero)  // late answer: poll again at once, never two in flight
    }

    @Test func throttledPollWaitsAtLeastOneSecondAndRetryAfter() {
        var policy = PollPolicy()
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.failure(.http(status: 429, retryAfter: .seconds(12), error: nil)))
        #expect(Self.armedDelay(h) == .seconds(12))
        h.fireNextTimer()
        h.respond(.failure(.http(status: 429, retryAfter: nil, error: nil)))
        #expect(Self.armedDelay(h)! >= .seconds(1))
        #expect(h.polls.map(\.outcome) == [.throttled, .throttled])
        #expect(h.polls[0].nextDelayMs == 12_000)
    }

    @Test func throttleFloorHoldsEvenForAFastMisbehavingInterval() {
        var policy = PollPolicy()
        policy.misbehaving = true
        policy.interval = .milliseconds(200)
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.failure(.http(status: 429, retryAfter: nil, error: nil)), latency: .zero)
        #expect(Self.armedDelay(h) == .seconds(1))
        h.fireNextTimer()
        h.respond(.success(.profile(nil)), latency: .zero)
        #expect(Self.armedDelay(h) == .milliseconds(200))
    }

    @Test func clientIgnoringThrottleKeepsItsInterval() {
        var policy = PollPolicy()
        policy.misbehaving = true
        policy.honoursThrottle = false
        policy.interval = .milliseconds(500)
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.failure(.http(status: 429, retryAfter: .seconds(30), error: nil)), latency: .zero)
        #expect(Self.armedDelay(h) == .milliseconds(500))
    }

    @Test func errorsBackOffExponentiallyWithFullJitterCappedAndResetOnSuccess() {
        var policy = PollPolicy()
        policy.jitter = 0
        #expect(
            (1...6).map { policy.backoffCeiling(consecutiveErrors: $0) } == [
                .seconds(10), .seconds(20), .seconds(40), .seconds(60), .seconds(60), .seconds(60),
            ]
        )

        // Many seeds: every wait lies in [interval, ceiling(n)] and the spread reaches the ceiling.
        var maxima = [Duration](repeating: .zero, count: 6)
        var minima = [Duration](repeating: .seconds(1000), count: 6)
        for seed in UInt64(0)..<200 {
            var h = EngineHarness(policy: policy, seed: seed)
            h.startLogin()
            for n in 0..<6 {
                let failure: BackendFailure = n.isMultiple(of: 2) ? .http(status: 503, retryAfter: nil, error: nil) : .transport("reset")
                h.respond(.failure(failure), latency: .zero)
                let delay = Self.armedDelay(h)!
                #expect(delay >= .seconds(5))
                #expect(delay <= policy.backoffCeiling(consecutiveErrors: n + 1))
                maxima[n] = max(maxima[n], delay)
                minima[n] = min(minima[n], delay)
                h.fireNextTimer()
            }
        }
        #expect(maxima[0] > .seconds(9) && maxima[1] > .seconds(18) && maxima[2] > .seconds(36))
        #expect(maxima[3] > .seconds(55) && maxima[5] <= .seconds(60))
        #expect(minima.allSatisfy { $0 < .seconds(8) })

        // A good answer resets the window.
        var h = EngineHarness(policy: policy, seed: 3)
        h.startLogin()
        for _ in 0..<4 {
            h.respond(.failure(.http(status: 500, retryAfter: nil, error: nil)), latency: .zero)
            h.fireNextTimer()
        }
        h.respond(.success(.profile(nil)), latency: .zero)
        #expect(Self.armedDelay(h) == .seconds(5))
        h.fireNextTimer()
        h.respond(.failure(.http(status: 502, retryAfter: nil, error: nil)), latency: .zero)
        #expect(Self.armedDelay(h)! <= .seconds(10))
        #expect(h.polls.map(\.outcome).filter { $0 == .serverError }.count == 5)
    }

    @Test func malformedAnswerBacksOffInsteadOfFailing() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.failure(.malformed(status: 200, reason: "not JSON")), latency: .zero)
        #expect(h.polls.last?.outcome == .malformed)
        #expect(Self.armedDelay(h)! >= .seconds(5))
        #expect(h.engine.isPolling)
    }

    @Test func pollingNeverGoesPastExpiryAndExpiryIsReported() {
        var policy = PollPolicy()
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin(codeTTL: .seconds(12))
        var sendTimes: [Duration] = []
        while h.timers[.codeExpiry] != nil {
            if let out = h.outstanding {
                sendTimes.append(out.sentAt.offset)
                h.respond(.success(.profile(nil)), latency: .zero)
            } else {
                h.fireNextTimer()
            }
        }
        let start = sendTimes[0]
        #expect(sendTimes.map { $0 - start } == [.zero, .seconds(5), .seconds(10)])
        #expect(h.polls.last?.nextDelayMs == nil)  // no poll planned past expiry
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["REG410", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.engine.snapshot.code == nil)
        #expect(!h.engine.isPolling)
        h.clock.advance(by: .seconds(60))
        h.apply(h.engine.timerFired(.poll))
        #expect(h.outstanding == nil)
    }

    @Test func backoffThatWouldCrossExpiryStopsPolling() {
        var policy = PollPolicy()
        policy.jitter = 0
        var h = EngineHarness(policy: policy)
        h.startLogin(codeTTL: .seconds(8))
        h.respond(.failure(.http(status: 503, retryAfter: nil, error: nil)), latency: .zero)
        // The next attempt would land at ≥ 5 s; with 8 s TTL it may still fit; a 429 with Retry-After 30 cannot.
        if h.timers[.poll] != nil {
            h.fireNextTimer()
            h.respond(.failure(.http(status: 429, retryAfter: .seconds(30), error: nil)), latency: .zero)
        }
        #expect(h.timers[.poll] == nil)
        h.fireNextTimer()
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func expiryCanRenewTheCodeABoundedNumberOfTimes() {
        var policy = PollPolicy()
        policy.onExpiry = .renew(times: 1)
        var h = EngineHarness(policy: policy)
        h.startLogin(codeTTL: .seconds(6), code: "FIRST01")
        h.respond(.success(.profile(nil)), latency: .zero)
        h.fireNextTimer()  // poll at ~5 s
        h.respond(.success(.profile(nil)), latency: .zero)
        h.fireNextTimer()  // expiry at 6 s → renewal
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respondWithCode("SECOND2", ttl: .seconds(6))
        h.respond(.success(.profile(nil)), latency: .zero)
        while h.timers[.codeExpiry] != nil {
            h.fireNextTimer()
            if h.outstanding != nil { h.respond(.success(.profile(nil)), latency: .zero) }
        }
        let codes = h.events.compactMap { $0.statusErrorID == "REGCODE" ? $0.args["statusDictionary"]?["message"]?.stringValue : nil }
        #expect(codes == ["FIRST01", "SECOND2"])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func deadCodeAnswerEndsTheLoop() {
        var policy = PollPolicy()
        policy.codeRecoveries = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.failure(.http(status: 400, retryAfter: nil, error: EnhancedError(status: 400, code: "invalid_authentication_session"))))
        #expect(h.polls.last?.outcome == .codeInvalid)
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.timers.isEmpty)
    }

    @Test func unauthorizedRefreshesTheTokenOnceAndRetriesWithoutReRegistering() {
        var h = EngineHarness()
        h.startLogin()
        let registrations = h.sent.filter { $0.request.name == "register" }.count
        h.respond(.failure(.http(status: 401, retryAfter: nil, error: EnhancedError(code: "invalid_access_token_client_application"))))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.respond(.success(.accessToken(token: "fresh", expiresIn: .seconds(3600))))
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        #expect(h.outstanding?.context.accessToken == "fresh")
        #expect(h.sent.filter { $0.request.name == "register" }.count == registrations)
        // A second 401 on the fresh token: the backend forgot the client, which registers again, once.
        h.respond(.failure(.http(status: 401, retryAfter: nil, error: nil)))
        #expect(h.outstanding?.request.name == "register")
        h.respond(.success(.registered(ClientCredentials(clientID: "client-2", clientSecret: "secret-2"))))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-2", clientSecret: "secret-2")))
        h.respond(.success(.accessToken(token: "fresher", expiresIn: .seconds(3600))))
        #expect(h.outstanding?.context.accessToken == "fresher")
        // A third 401 is neither refreshed nor registered again: polling on cannot cure it, the loop ends (REG500).
        h.respond(.failure(.http(status: 401, retryAfter: nil, error: nil)))
        #expect(h.outstanding == nil)
        #expect(h.timers[.poll] == nil)
        #expect(h.sent.filter { $0.request.name == "register" }.count == registrations + 1)
        #expect(h.polls.map(\.outcome) == [.unauthorized, .unauthorized, .unauthorized])
        #expect(!h.engine.isPolling)
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["REG500", nil])
    }

    @Test func expiredTokenIsRefreshedBeforeThePoll() {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.respond(.success(.registered(ClientCredentials(clientID: "c", clientSecret: "s"))))
        h.respond(.success(.accessToken(token: "short", expiresIn: .seconds(90))))
        h.respond(.success(.configuration(mvpds: EngineHarness.mvpds)))
        h.command(.getAuthentication(mvpd: "Cablevision"))
        h.respondWithCode("ABC1234")
        h.clock.advance(by: .seconds(40))
        h.respond(.success(.profile(nil)))
        h.fireNextTimer()
        #expect(h.outstanding?.request.name == "token")
        #expect(h.sent.filter { $0.request.name == "register" }.count == 1)
    }

    @Test func onlyOneRequestIsEverInFlight() {
        // The harness traps on a second send while one is out; drive a busy mix of inputs through it.
        var h = EngineHarness()
        h.startLogin()
        h.command(.checkAuthentication)
        h.command(.setRequestor(signingKeys: nil))
        h.apply(h.engine.timerFired(.poll))
        h.respond(.success(.profile(nil)))
        #expect(h.outstanding?.request == .configuration)
        h.respond(.success(.configuration(mvpds: EngineHarness.mvpds)))
        h.fireNextTimer()
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        h.apply(h.engine.timerFired(.poll))
        #expect(h.sent.filter { $0.request.name == "profiles.code" }.count == 2)
    }

    @Test func tooManyConsecutiveErrorsGiveUp() {
        var policy = PollPolicy()
        policy.maxConsecutiveErrors = 3
        var h = EngineHarness(policy: policy)
        h.startLogin()
        for _ in 0..<3 {
            h.respond(.failure(.transport("refused")))
            if h.timers[.poll] != nil { h.fireNextTimer() }
        }
        #expect(h.events.suffix(2).map(\.statusErrorID) == ["REG500", nil])
        #expect(!h.engine.isPolling)
    }

    @Test func policyRefusesIntervalsUnderThreeSecondsUnlessMisbehaving() {
        var policy = PollPolicy()
        policy.interval = .seconds(2)
        #expect(!policy.validationErrors().isEmpty)
        policy.misbehaving = true
        #expect(policy.validationErrors().isEmpty)
        #expect(PollPolicy().validationErrors().isEmpty)
    }

    @Test func resumeKeepsPollingTheStoredCodeWithoutRegisteringOrRequestingANewCode() throws {
        var snapshot = DeviceSnapshot()
        snapshot.phase = .polling
        snapshot.credentials = ClientCredentials(clientID: "c", clientSecret: "s")
        snapshot.accessToken = AccessToken(token: "kept", expiresEpochMs: 1_763_720_000_000 + 3_600_000)
        snapshot.mvpds = EngineHarness.mvpds
        snapshot.selectedMVPD = "Cablevision"
        snapshot.code = IssuedCode(code: "KEEP123", expiresEpochMs: 1_763_720_000_000 + 600_000, mvpd: "Cablevision")
        var h = EngineHarness(snapshot: snapshot)
        h.resume()
        // The first poll after a restart is spread within one interval, not sent at once.
        #expect(h.sent.isEmpty)
        let first = try #require(h.timers[.poll])
        #expect(first >= ManualClock.Instant(offset: .zero) && first < ManualClock.Instant(offset: .seconds(5)))
        h.fireNextTimer()
        #expect(h.sent.map(\.request) == [.pollProfile(code: "KEEP123", mvpd: "Cablevision")])
        #expect(h.outstanding?.context.accessToken == "kept")
        #expect(!h.eventNames.contains("status"))
        #expect(h.timers[.codeExpiry] == ManualClock.Instant(offset: .seconds(600)))
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.events.first == .setAuthenticationStatus(1, ""))
    }

    @Test func resumedFleetSpreadsItsFirstPollsOverOneInterval() {
        var snapshot = DeviceSnapshot()
        snapshot.phase = .polling
        snapshot.credentials = ClientCredentials(clientID: "c", clientSecret: "s")
        snapshot.accessToken = AccessToken(token: "kept", expiresEpochMs: 1_763_720_000_000 + 3_600_000)
        snapshot.mvpds = EngineHarness.mvpds
        snapshot.code = IssuedCode(code: "KEEP123", expiresEpochMs: 1_763_720_000_000 + 600_000, mvpd: "Cablevision")
        var firsts: [Duration] = []
        for seed in UInt64(1)...100 {
            var h = EngineHarness(snapshot: snapshot, seed: seed)
            h.resume()
            firsts.append(h.timers[.poll]!.offset)
        }
        #expect(firsts.allSatisfy { $0 >= .zero && $0 < .seconds(5) })
        // Spread, not bunched: every second of the interval gets some of the hundred devices.
        for second in 0..<5 {
            #expect(firsts.contains { $0 >= .seconds(second) && $0 < .seconds(second + 1) })
        }
    }

    @Test func resumeOfAnExpiredCodeReportsExpiry() {
        var snapshot = DeviceSnapshot()
        snapshot.phase = .polling
        snapshot.mvpds = EngineHarness.mvpds
        snapshot.code = IssuedCode(code: "GONE123", expiresEpochMs: 1_763_720_000_000 - 1, mvpd: "Cablevision")
        var h = EngineHarness(snapshot: snapshot)
        h.resume()
        #expect(h.sent.isEmpty)
        #expect(h.events.map(\.statusErrorID) == ["REG410", nil])
        #expect(h.engine.snapshot.code == nil)
    }
}
