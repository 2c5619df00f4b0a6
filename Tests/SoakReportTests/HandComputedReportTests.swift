import RegcodeRecords
import SoakReport
import Testing

/// Every figure of `Fixture`, worked out by hand (nearest rank: value at rank ⌈p·n/100⌉).
@Suite struct HandComputedReportTests {
    let report = Fixture.report()

    private func device(_ name: String) throws -> PollFigures {
        try #require(report.devices.first { $0.device == name }).figures
    }

    @Test func devicesIncludeOneKnownOnlyFromEventsInNaturalOrder() {
        #expect(report.devices.map(\.device) == ["stb-1", "stb-2", "stb-3"])
        #expect(report.eventsLoaded)
    }

    @Test func stb1() throws {
        let f = try device("stb-1")
        #expect(f.polls == 6)
        // Codes AAA (4 polls) and BBB (2): sorted [2, 4], mean 3, max 4, p50 rank ⌈1⌉ = 2.
        #expect(f.codes == 2)
        #expect(f.pollsPerCode == Distribution([2, 4]))
        #expect(f.pollsPerCode.mean == 3 && f.pollsPerCode.max == 4 && f.pollsPerCode.p50 == 2)
        // Achieved: AAA 6040−1010 = 5030, 12050−6040 = 6010, 17100−12050 = 5050; BBB 40025−30005 = 10020.
        // Sorted [5030, 5050, 6010, 10020]: p50 rank 2 → 5050, p95 rank ⌈3.8⌉ = 4 → 10020.
        #expect(f.achievedInterval.count == 4)
        #expect(f.achievedInterval.min == 5030)
        #expect(f.achievedInterval.p50 == 5050)
        #expect(f.achievedInterval.p95 == 10020)
        #expect(f.achievedInterval.p99 == 10020)
        #expect(f.achievedInterval.max == 10020)
        // Planned (next_delay_ms of the previous poll): 5000, 6000, 5000, 10000 → [5000, 5000, 6000, 10000].
        #expect(f.plannedInterval.count == 4)
        #expect(f.plannedInterval.p50 == 5000)
        #expect(f.plannedInterval.p95 == 10000)
        #expect(f.plannedInterval.max == 10000)
        // Lateness: 10, 10, 0, 20, 5, 5 → [0, 5, 5, 10, 10, 20]: p50 rank 3 → 5, p95 rank ⌈5.7⌉ = 6 → 20.
        #expect(f.lateness.count == 6)
        #expect(f.lateness.min == 0)
        #expect(f.lateness.p50 == 5)
        #expect(f.lateness.p95 == 20)
        #expect(f.lateness.p99 == 20)
        #expect(f.lateness.max == 20)
        #expect(f.throttled == 1)
        // #6 follows #5's server-error; #3 follows a 429, which is not a backoff.
        #expect(f.backoffs == 1)
        // AAA: authenticated poll sent 17100 − first poll sent 1010 = 16090.
        #expect(f.authenticatedCodes == 1)
        #expect(f.timeToAuthenticate.count == 1)
        #expect(f.timeToAuthenticate.p50 == 16090)
        #expect(f.timeToAuthenticate.max == 16090)
        // BBB stopped (next_delay null) while pending, and a REG410 names it.
        #expect(f.expiredCodes == 1)
        #expect(f.endedCodes == 0)
        #expect(f.openCodes == 0)
        #expect(f.codeInvalid == 0)
        #expect(f.expiryEvents == 1)
        #expect(f.failureEvents == 0)
        #expect(f.outcomes[.pending] == 3)
        #expect(f.outcomes[.authenticated] == 1)
        #expect(f.outcomes[.throttled] == 1)
        #expect(f.outcomes[.serverError] == 1)
        #expect(f.outcomes[.abandoned] == 0)
        #expect(f.outcomes.count == SoakReport.outcomeKinds.count)
        #expect(f.httpStatuses == [200: 4, 429: 1, 503: 1])
        #expect(f.withoutHTTPStatus == 0)
        #expect(f.latency.max == 40)
        #expect(f.firstSentMs == 1010)
        #expect(f.lastSentMs == 40025)
    }

    @Test func stb2() throws {
        let f = try device("stb-2")
        #expect(f.polls == 7)
        // CCC 3, XXX 1, DDD 3 → [1, 3, 3]: mean 7/3, max 3, p50 rank ⌈1.5⌉ = 2 → 3.
        #expect(f.codes == 3)
        #expect(f.pollsPerCode.mean == 7.0 / 3.0)
        #expect(f.pollsPerCode.max == 3)
        #expect(f.pollsPerCode.p50 == 3)
        // Achieved: CCC 5012, 4003; DDD 5019, 5009 → [4003, 5009, 5012, 5019]: p50 rank 2 → 5009.
        #expect(f.achievedInterval.count == 4)
        #expect(f.achievedInterval.p50 == 5009)
        #expect(f.achievedInterval.p95 == 5019)
        #expect(f.achievedInterval.max == 5019)
        // Planned: 5000, 4000, 5000, 5000 → [4000, 5000, 5000, 5000].
        #expect(f.plannedInterval.min == 4000)
        #expect(f.plannedInterval.p50 == 5000)
        #expect(f.plannedInterval.p95 == 5000)
        // Lateness: 0, 2, 0, 3, 1, 7, 0 → [0, 0, 0, 1, 2, 3, 7]: p50 rank ⌈3.5⌉ = 4 → 1, p95 rank ⌈6.65⌉ = 7 → 7.
        #expect(f.lateness.count == 7)
        #expect(f.lateness.min == 0)
        #expect(f.lateness.p50 == 1)
        #expect(f.lateness.p95 == 7)
        #expect(f.lateness.p99 == 7)
        #expect(f.lateness.max == 7)
        #expect(f.throttled == 0)
        // #9 follows #8's transport error.
        #expect(f.backoffs == 1)
        #expect(f.authenticatedCodes == 0)
        #expect(f.timeToAuthenticate == .empty)
        // CCC ended code-invalid (expired); XXX was replaced by DDD (ended); DDD is still polling (open).
        #expect(f.expiredCodes == 1)
        #expect(f.endedCodes == 1)
        #expect(f.openCodes == 1)
        #expect(f.codeInvalid == 1)
        #expect(f.expiryEvents == 1)
        #expect(f.failureEvents == 1)
        #expect(f.httpStatuses == [200: 5, 410: 1])
        #expect(f.withoutHTTPStatus == 1)
        #expect(f.outcomes[.transportError] == 1)
        #expect(f.outcomes[.codeInvalid] == 1)
    }

    @Test func stb3KnownOnlyFromAFailureEvent() throws {
        let f = try device("stb-3")
        #expect(f.polls == 0)
        #expect(f.codes == 0)
        #expect(f.lateness == .empty)
        #expect(f.expiryEvents == 0)
        #expect(f.failureEvents == 1)
    }

    @Test func fleet() {
        let f = report.fleet
        #expect(f.polls == 13)
        // Polls per code [1, 2, 3, 3, 4]: mean 13/5 = 2.6, max 4, p50 rank ⌈2.5⌉ = 3 → 3.
        #expect(f.codes == 5)
        #expect(f.pollsPerCode.mean == 2.6)
        #expect(f.pollsPerCode.max == 4)
        #expect(f.pollsPerCode.p50 == 3)
        // Achieved [4003, 5009, 5012, 5019, 5030, 5050, 6010, 10020]: p50 rank 4 → 5019, p95 rank ⌈7.6⌉ = 8.
        #expect(f.achievedInterval.count == 8)
        #expect(f.achievedInterval.p50 == 5019)
        #expect(f.achievedInterval.p95 == 10020)
        #expect(f.achievedInterval.p99 == 10020)
        #expect(f.achievedInterval.max == 10020)
        // Planned [4000, 5000 ×5, 6000, 10000]: p50 rank 4 → 5000, p95 rank 8 → 10000.
        #expect(f.plannedInterval.count == 8)
        #expect(f.plannedInterval.p50 == 5000)
        #expect(f.plannedInterval.p95 == 10000)
        #expect(f.plannedInterval.max == 10000)
        // Lateness [0, 0, 0, 0, 1, 2, 3, 5, 5, 7, 10, 10, 20]: p50 rank ⌈6.5⌉ = 7 → 3,
        // p95 rank ⌈12.35⌉ = 13 → 20, p99 rank ⌈12.87⌉ = 13 → 20.
        #expect(f.lateness.count == 13)
        #expect(f.lateness.min == 0)
        #expect(f.lateness.p50 == 3)
        #expect(f.lateness.p95 == 20)
        #expect(f.lateness.p99 == 20)
        #expect(f.lateness.max == 20)
        #expect(f.throttled == 1)
        #expect(f.backoffs == 2)
        #expect(f.authenticatedCodes == 1)
        #expect(f.timeToAuthenticate.p50 == 16090)
        #expect(f.timeToAuthenticate.p95 == 16090)
        #expect(f.timeToAuthenticate.max == 16090)
        #expect(f.expiredCodes == 2)
        #expect(f.endedCodes == 1)
        #expect(f.openCodes == 1)
        #expect(f.codeInvalid == 1)
        #expect(f.expiryEvents == 2)
        #expect(f.failureEvents == 2)
        #expect(f.httpStatuses == [200: 9, 410: 1, 429: 1, 503: 1])
        #expect(f.withoutHTTPStatus == 1)
        #expect(f.firstSentMs == 1010)
        #expect(f.lastSentMs == 60029)
    }

    @Test func codeSummariesInDeviceThenTimeOrder() {
        #expect(
            report.codes.map { "\($0.device)/\($0.code)/\($0.fate.rawValue)/\($0.polls)" } == [
                "stb-1/AAA/authenticated/4", "stb-1/BBB/expired/2",
                "stb-2/CCC/expired/3", "stb-2/XXX/ended/1", "stb-2/DDD/open/3",
            ]
        )
        #expect(report.codes[0].firstSentMs == 1010 && report.codes[0].lastSentMs == 17100)
    }

    @Test func seriesFeedTheCharts() {
        #expect(report.series.achievedIntervals == [4003, 5009, 5012, 5019, 5030, 5050, 6010, 10020])
        #expect(report.series.lateness.map(\.sentMs) == Fixture.polls.map(\.sentEpochMs).sorted())
        #expect(report.series.lateness.first == LatenessPoint(sentMs: 1010, latenessMs: 10))
        #expect(report.series.lateness.last == LatenessPoint(sentMs: 60029, latenessMs: 0))
    }
}

/// Rules that the hand-computed case does not reach.
@Suite struct CodeFateTests {
    @Test func withoutEventsTheEventFiguresAreUnknownAndThePollLogDecides() {
        let report = Fixture.report(events: nil)
        #expect(!report.eventsLoaded)
        #expect(report.fleet.expiryEvents == nil)
        #expect(report.fleet.failureEvents == nil)
        #expect(report.devices.map(\.device) == ["stb-1", "stb-2"])
        // BBB and CCC both stopped without success, so the poll log alone still finds both.
        #expect(report.fleet.expiredCodes == 2)
    }

    @Test func anAbandonedLastAnswerEndsTheCodeUnlessAnExpiryNamesIt() {
        let polls = [
            Fixture.poll("stb-1", "AB1", 0, 5, 200, "pending", 5000, latency: 1),
            Fixture.poll("stb-1", "AB1", 5006, 5010, 200, "abandoned", nil, latency: 1),
        ]
        let plain = SoakReport(polls: polls, statusEvents: [], generatedAtMs: 0)
        #expect(plain.codes.map(\.fate) == [.ended])
        #expect(plain.fleet.expiredCodes == 0)
        let expired = SoakReport(
            polls: polls,
            statusEvents: [StatusEventRecord(device: "stb-1", timeMs: 6000, errorId: "REG410", code: "AB1")],
            generatedAtMs: 0
        )
        #expect(expired.codes.map(\.fate) == [.expired])
        #expect(expired.fleet.expiredCodes == 1)
    }

    @Test func anExpiryOfAnotherDevicesCodeDoesNotCount() {
        let polls = [Fixture.poll("stb-1", "SAME", 0, 0, 200, "pending", 5000, latency: 1)]
        let report = SoakReport(
            polls: polls,
            statusEvents: [StatusEventRecord(device: "stb-2", timeMs: 10, errorId: "REG410", code: "SAME")],
            generatedAtMs: 0
        )
        #expect(report.codes.map(\.fate) == [.open])
    }

    @Test func clientErrorsAreFollowedByBackoffsButThrottlesAreNot() {
        let polls = [
            Fixture.poll("d", "C", 0, 0, 400, "client-error", 7000, latency: 1),
            Fixture.poll("d", "C", 7001, 7001, 429, "throttled", 6000, latency: 1),
            Fixture.poll("d", "C", 13002, 13002, 401, "unauthorized", 9000, latency: 1),
            Fixture.poll("d", "C", 22003, 22003, 200, "malformed", 12000, latency: 1),
            Fixture.poll("d", "C", 34004, 34004, 200, "pending", 5000, latency: 1),
        ]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        // After client-error (#2 is a backoff), after unauthorized (#4), after malformed (#5); #3 follows a 429.
        #expect(report.fleet.backoffs == 3)
        #expect(report.fleet.throttled == 1)
    }

    @Test func aTokenRefreshRetryAfterA401IsNotABackoff() {
        let polls = [
            // First 401: the engine refreshes its token and re-sends at once (no next wait).
            Fixture.poll("d", "C", 0, 0, 401, "unauthorized", nil, latency: 5),
            Fixture.poll("d", "C", 0, 60, 401, "unauthorized", 9000, latency: 5),
            Fixture.poll("d", "C", 9065, 9065, 200, "pending", 5000, latency: 5),
        ]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        // Only #3 waited a backoff (after #2's 9000 ms).
        #expect(report.fleet.backoffs == 1)
        #expect(report.fleet.achievedInterval.min == 60)
        #expect(report.fleet.plannedInterval.count == 1)
        #expect(report.codes.map(\.fate) == [.open])
    }

    @Test func unknownOutcomesAreCountedNotDropped() {
        let polls = [Fixture.poll("d", "C", 0, 0, 200, "something-new", 5000, latency: 1)]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        #expect(report.fleet.outcomes[PollOutcome(rawValue: "something-new")] == 1)
        #expect(report.fleet.outcomes[.pending] == 0)
    }

    @Test func negativeLatenessShowsInTheMinimum() {
        let polls = [Fixture.poll("d", "C", 1000, 990, 200, "pending", 5000, latency: 1)]
        let report = SoakReport(polls: polls, statusEvents: nil, generatedAtMs: 0)
        #expect(report.fleet.lateness.min == -10)
    }

    @Test func namesSortNaturally() {
        let names = ["stb-10", "stb-2", "stb-1", "a", "stb-02x", "stb-100", "b-1"]
        #expect(names.sorted(by: NaturalOrder.less) == ["a", "b-1", "stb-1", "stb-2", "stb-02x", "stb-10", "stb-100"])
    }
}
