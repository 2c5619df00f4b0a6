import AccessEnablerAPI
import RegcodeEngine
import Testing

/// The engine says why each code stopped being polled; the store records exactly that.
@Suite struct CodeOutcomeTests {
    @Test func anApprovedCodeEndsAuthenticated() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(EngineHarness.approved)))
        #expect(h.endedCodes == [CodeEnding(code: "ABC1234", outcome: .authenticated)])
        #expect(h.engine.phase == .authenticated)
    }

    @Test func aCodeThatRunsOutEndsExpiredBeforeItsREG410() {
        var h = EngineHarness()
        h.startLogin(codeTTL: .seconds(12))
        while h.engine.isPolling {
            if h.outstanding != nil { h.respond(.success(.profile(nil))) } else { _ = h.fireNextTimer() }
        }
        #expect(h.endedCodes == [CodeEnding(code: "ABC1234", outcome: .expired)])
        #expect(h.events.last == .setAuthenticationStatus(0, .genericAuthentication))
        #expect(h.events.dropLast().last?.statusID == .registrationCodeExpired)
        #expect(h.engine.phase == .ready)
    }

    @Test func aNewLoginReplacesThePendingCodeAndACancelCancelsIt() {
        var h = EngineHarness()
        h.startLogin()
        h.respond(.success(.profile(nil)))
        h.command(.getAuthentication(mvpd: "Cablevision"))
        #expect(h.endedCodes == [CodeEnding(code: "ABC1234", outcome: .replaced)])
        #expect(h.engine.phase == .requestingCode)
        h.respondWithCode("XYZ7890")
        h.command(.setSelectedProvider(nil))
        #expect(h.endedCodes.last == CodeEnding(code: "XYZ7890", outcome: .cancelled))
        #expect(h.engine.phase == .ready)
    }

    @Test func aRefusedCodeEndsFailedWithTheReason() {
        var policy = PollPolicy()
        policy.codeRecoveries = 0
        var h = EngineHarness(policy: policy)
        h.startLogin()
        h.respond(.failure(.http(status: 410, retryAfter: nil, error: nil)))
        #expect(h.endedCodes == [CodeEnding(code: "ABC1234", outcome: .failed(reason: "registration code ABC1234 is no longer valid"))])
    }

    @Test func phaseIsComputedAndPersistedWithEveryChange() {
        var h = EngineHarness()
        #expect(h.engine.phase == .new)
        h.command(.setRequestor(signingKeys: nil))
        #expect(h.engine.phase == .configuring)
        #expect(h.persisted.last?.phase == .configuring)
        h.answerHousekeeping()
        #expect(h.engine.phase == .ready)
        h.command(.getAuthentication(mvpd: nil))
        #expect(h.engine.phase == .selectingProvider)
        #expect(h.engine.snapshot.phase == h.engine.phase)
    }
}
