import RegcodeEngine
import RegcodeRecords
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

@Suite struct LiveStatsTests {
    /// A day of a large fleet records hundreds of thousands of batches; releasing the figures afterwards
    /// must not walk a chain as long as the run (it once overflowed the stack when the daemon exited).
    @Test func manyBatchesLeaveNothingThatGrowsWithTheRun() {
        do {
            let stats = LiveStats()
            stats.setFleetResolver { device in device.hasPrefix("lab-") ? "lab" : nil }
            for _ in 0..<400_000 {
                stats.record([])
            }
        }
    }
}

@Suite struct LastOutcomeTests {
    static func poll(_ status: Int?, _ outcome: PollOutcome, next: Int64? = nil, at: Int64 = 1_000) -> PollAttempt {
        PollAttempt(code: "ABC1234", plannedEpochMs: at, sentEpochMs: at, latencyMs: 2, httpStatus: status, outcome: outcome, nextDelayMs: next)
    }

    @Test(arguments: [
        (poll(200, .pending, next: 5_000), "pending", "poll 200 pending"),
        (poll(429, .throttled, next: 7_250), "throttled", "poll 429 throttled (retry in 7.3 s)"),
        (poll(nil, .transportError, next: 30_000), "transport-error", "poll no answer transport-error (retry in 30 s)"),
        (poll(200, .authenticated), "authenticated", "poll 200 authenticated"),
        (poll(500, .serverError), "server-error", "poll 500 server-error"),
    ])
    func aPollSaysItsStatusOutcomeAndRetry(poll: PollAttempt, kind: String, text: String) throws {
        let outcome = try #require(LastOutcome.of(DeviceStep(device: "stb-1", polls: [poll], epochMs: 1_000)))
        #expect(outcome.kind == kind)
        #expect(outcome.text == text)
        #expect(outcome.at == 1_000)
        #expect(outcome.why == nil)
    }

    @Test func aRequestSaysItsStageAndTheLatestEntryWins() throws {
        let failed = RequestAttempt(
            stage: .registration,
            endpoint: "register",
            sentEpochMs: 10,
            latencyMs: 1,
            httpStatus: 503,
            outcome: .serverError,
            errorCode: "service_unavailable",
            retryDelayMs: 2_000
        )
        let step = DeviceStep(device: "stb-1", requests: [failed], epochMs: 10)
        let outcome = try #require(LastOutcome.of(step))
        #expect(outcome.kind == "server-error")
        #expect(outcome.text == "registration 503 (retry in 2.0 s)")
        #expect(outcome.why == "service_unavailable")
        let ok = RequestAttempt(stage: .registration, endpoint: "register", sentEpochMs: 20, latencyMs: 1, httpStatus: 201, outcome: .ok)
        let later = try #require(
            LastOutcome.of(DeviceStep(device: "stb-1", polls: [Self.poll(200, .pending, at: 30)], requests: [failed, ok], epochMs: 30))
        )
        #expect(later.text == "poll 200 pending")
        #expect(try #require(LastOutcome.of(DeviceStep(device: "stb-1", requests: [ok], epochMs: 20))).text == "registration ok")
        #expect(LastOutcome.of(DeviceStep(device: "stb-1", polls: [Self.poll(200, .abandoned)], epochMs: 1)) == nil)
    }

    @Test func liveStatsCountPollsThrottlesAndErrorsPerFleet() {
        let stats = LiveStats()
        stats.setFleetResolver { _ in "lab" }
        let requests = [
            RequestAttempt(stage: .registration, endpoint: "register", sentEpochMs: 1_000, latencyMs: 1, httpStatus: 429, outcome: .throttled),
            RequestAttempt(stage: .registration, endpoint: "register", sentEpochMs: 1_000, latencyMs: 1, httpStatus: nil, outcome: .transportError),
        ]
        let polls = [
            Self.poll(200, .pending), Self.poll(429, .throttled), Self.poll(502, .serverError), Self.poll(nil, .malformed),
            Self.poll(200, .abandoned),
        ]
        stats.record([DeviceStep(device: "stb-1", polls: polls, requests: requests, epochMs: 1_000)])
        let recent = stats.counters()["lab"]?.recent(now: 1, seconds: 60)
        #expect(recent?.polls == 4)
        #expect(recent?.throttled == 2)
        #expect(recent?.errors == 3)
        #expect(stats.lastOutcome(of: "stb-1")?.text == "poll no answer malformed")
    }
}
