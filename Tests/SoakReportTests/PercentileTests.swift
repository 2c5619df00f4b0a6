import SoakReport
import Testing

@Suite struct NearestRankTests {
    @Test func emptyHasNoPercentile() {
        #expect(NearestRank.percentile(50, ofSorted: [Int]()) == nil)
        #expect(Distribution([]) == .empty)
        #expect(Distribution([]).count == 0)
        #expect(Distribution([]).mean == nil)
    }

    @Test func oneElementIsEveryPercentile() {
        for percent in [1, 50, 95, 99, 100] {
            #expect(NearestRank.percentile(percent, ofSorted: [7]) == 7)
        }
        let d = Distribution([7])
        #expect(d.min == 7 && d.p50 == 7 && d.p95 == 7 && d.p99 == 7 && d.max == 7 && d.mean == 7)
    }

    @Test func twoElements() {
        // Ranks: p50 → ⌈1.0⌉ = 1, p51 → ⌈1.02⌉ = 2, p95 → ⌈1.9⌉ = 2, p99 → ⌈1.98⌉ = 2.
        #expect(NearestRank.percentile(50, ofSorted: [10, 20]) == 10)
        #expect(NearestRank.percentile(51, ofSorted: [10, 20]) == 20)
        #expect(NearestRank.percentile(95, ofSorted: [10, 20]) == 20)
        #expect(NearestRank.percentile(99, ofSorted: [10, 20]) == 20)
        #expect(NearestRank.percentile(1, ofSorted: [10, 20]) == 10)
        #expect(Distribution([20, 10]).p50 == 10)
    }

    @Test func hundredElements() {
        let values = Array(1...100)
        // Rank ⌈p·100/100⌉ = p exactly: no floating-point drift to rank 96 for p95.
        #expect(NearestRank.percentile(1, ofSorted: values) == 1)
        #expect(NearestRank.percentile(50, ofSorted: values) == 50)
        #expect(NearestRank.percentile(95, ofSorted: values) == 95)
        #expect(NearestRank.percentile(99, ofSorted: values) == 99)
        #expect(NearestRank.percentile(100, ofSorted: values) == 100)
        let d = Distribution(integers: values.reversed())
        #expect(d.count == 100 && d.min == 1 && d.p50 == 50 && d.p95 == 95 && d.p99 == 99 && d.max == 100 && d.mean == 50.5)
    }

    @Test func hundredAndOneElementsRoundTheRankUp() {
        // n = 101: p50 rank ⌈50.5⌉ = 51, p95 rank ⌈95.95⌉ = 96, p99 rank ⌈99.99⌉ = 100.
        let d = Distribution(integers: 1...101)
        #expect(d.p50 == 51)
        #expect(d.p95 == 96)
        #expect(d.p99 == 100)
        #expect(d.max == 101)
    }
}

@Suite struct ReportSinceTests {
    let now: Int64 = 1_763_720_000_000  // 2025-11-21T10:13:20Z

    @Test func durationsCountBackFromNow() throws {
        #expect(try ReportSince.parse("30m", nowMs: now) == now - 1_800_000)
        #expect(try ReportSince.parse("2h", nowMs: now) == now - 7_200_000)
        #expect(try ReportSince.parse("7d", nowMs: now) == now - 604_800_000)
        #expect(try ReportSince.parse("1h30m", nowMs: now) == now - 5_400_000)
        #expect(try ReportSince.parse("45s", nowMs: now) == now - 45_000)
        #expect(try ReportSince.parse("1w", nowMs: now) == now - 604_800_000)
        #expect(try ReportSince.parse("250ms", nowMs: now) == now - 250)
    }

    @Test func epochMilliseconds() throws {
        #expect(try ReportSince.parse("1763720000000", nowMs: 0) == 1_763_720_000_000)
    }

    @Test func isoTimes() throws {
        #expect(try ReportSince.parse("2025-11-21T10:13:20Z", nowMs: 0) == now)
        #expect(try ReportSince.parse("2025-11-21T10:13:20.250Z", nowMs: 0) == now + 250)
        #expect(try ReportSince.parse("2025-11-21T11:13:20+01:00", nowMs: 0) == now)
        // Without a zone: UTC, not the host's zone.
        #expect(try ReportSince.parse("2025-11-21T10:13:20", nowMs: 0) == now)
        #expect(try ReportSince.parse("2025-11-21 10:13:20", nowMs: 0) == now)
        #expect(try ReportSince.parse("2025-11-21", nowMs: 0) == now - (10 * 3600 + 13 * 60 + 20) * 1000)
    }

    @Test func nonsenseIsRefusedWithTheAcceptedForms() {
        for input in ["", "yesterday", "h", "30x", "2h-", "2025-13-45T00:00:00Z", "9999999999999999999999d"] {
            #expect(throws: ReportSince.ParseError.self) { try ReportSince.parse(input, nowMs: now) }
        }
        #expect((try? ReportSince.parse("5", nowMs: now)) == 5, "bare digits are epoch milliseconds")
        let error = #expect(throws: ReportSince.ParseError.self) { try ReportSince.parse("yesterday", nowMs: now) }
        #expect(error?.input == "yesterday")
        #expect(error?.description.contains("30m") == true)
        #expect(error?.description.contains("yesterday") == true)
    }
}
