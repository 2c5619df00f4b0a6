import RegcodeEngine
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

/// The terminal's live status line and the summary at exit, from the live figures.
@Suite struct ProgressLineTests {
    @Test func theStatusLineSaysStatesRateLatenessAndErrors() {
        var recent = LiveStats.Bucket(second: 100)
        recent.polls = 40
        for ms in [0, 3, 5, 9, 12] as [Int64] { recent.lateness.add(latenessMs: ms) }
        var minute = LiveStats.Bucket(second: 100)
        minute.throttled = 3
        minute.errors = 1
        let line = ProgressLine.status(phases: [.polling: 12, .authenticated: 8], recent: recent, rateSeconds: 10, minute: minute)
        #expect(line == "20 devices: 12 polling, 8 authenticated · 4.0 polls/s · late p99 ≤ 16 ms · 429s 3/min · errors 1/min")
        let idle = ProgressLine.status(phases: [:], recent: LiveStats.Bucket(), rateSeconds: 10, minute: LiveStats.Bucket())
        #expect(idle == "0 devices · 0.0 polls/s · late p99 - · 429s 0/min · errors 0/min")
    }

    @Test func latenessBinsGiveAPercentileWithinAFactorOfTwo() {
        var bins = LiveStats.LatenessBins()
        #expect(bins.percentile(99) == nil)
        for _ in 0..<98 { bins.add(latenessMs: 2) }
        bins.add(latenessMs: 700)
        bins.add(latenessMs: 3_470)
        #expect(bins.percentile(50) == 2)
        #expect(bins.percentile(99) == 1024)
        #expect(bins.percentile(100) == 4096)
        var far = LiveStats.LatenessBins()
        far.add(latenessMs: 10_000_000)
        #expect(far.percentile(99) == 32_768)
    }

    @Test func theSummarySaysHowLongAndWhatHappened() {
        var totals = LiveStats.Counters()
        totals.add(second: 5, polls: 412, throttled: 2, errors: 1, late: 3)
        #expect(
            ProgressLine.summary(elapsedMs: 125_000, phases: [.authenticated: 20], totals: totals)
                == "stopped after 2m 05s: 20 devices (20 authenticated); 412 polls (3 over 1 s late in the last minute); 429s 2; errors 1"
        )
        #expect(ProgressLine.elapsed(8_868) == "9 s")
        #expect(ProgressLine.elapsed(3_725_000) == "1h 02m")
    }
}
