import InMemoryLogging
import Logging
import RegcodeSupport
import RegcodeTestSupport
import Testing

/// The log that rate-limits its own repeats, on a manual clock.
@Suite struct RepeatLimitedLogTests {
    @Test func theFirstOfAReasonIsWrittenThenOnePerIntervalWithTheCountHeldBack() {
        let clock = ManualClock()
        var limiter = RepeatLimiter<ManualClock.Instant>(interval: .seconds(10))
        #expect(limiter.record("cap", now: clock.now) == .write(suppressed: 0, over: nil))
        for _ in 0..<19_532 {
            clock.advance(by: .microseconds(100))
            #expect(limiter.record("cap", now: clock.now) == .suppress)
        }
        // Another reason is not held back by the first.
        #expect(limiter.record("emfile", now: clock.now) == .write(suppressed: 0, over: nil))
        clock.advance(to: ManualClock.Instant(offset: .seconds(10)))
        #expect(limiter.record("cap", now: clock.now) == .write(suppressed: 19_532, over: .seconds(10)))
        // A quiet interval later, a repeat is written with nothing held back.
        clock.advance(by: .seconds(30))
        #expect(limiter.record("cap", now: clock.now) == .write(suppressed: 0, over: nil))
    }

    @Test func aFloodOfRepeatsCostsOneLinePerIntervalSayingHowManyWereHeldBack() {
        let clock = ManualClock()
        let capture = InMemoryLogHandler()
        let log = RepeatLimitedLog(logger: Logger(label: "listener") { _ in capture }, interval: .seconds(10), clock: clock)
        // 20,000 refusals over 20 s: one line at the start, one at 10 s and one at 20 s.
        for _ in 0..<20_000 {
            log.log(.warning, reason: "cap", "refused connections over the cap", metadata: ["listener": "http"])
            clock.advance(by: .milliseconds(1))
        }
        log.log(.warning, reason: "cap", "refused connections over the cap")
        let lines = capture.entries.map(\.message.description)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first == "refused connections over the cap")
        #expect(lines.dropFirst().first == "refused connections over the cap; 9999 more in the last 10 s")
        #expect(capture.entries.dropFirst().first?.metadata["log.suppressed"] == "9999")
        #expect(capture.entries.first?.metadata["listener"] == "http")
    }
}
