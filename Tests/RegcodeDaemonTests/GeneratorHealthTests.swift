import RegcodeEngine
import RegcodeRecords
import RegcodeSupport
import Testing

@testable import DeviceEvents
@testable import RegcodeDaemon

/// The emulator's own health, from one sample a second: reasons, windows and time behind.
@Suite struct GeneratorHealthTests {
    typealias Sample = GeneratorHealthTracker.Sample

    @Test func eachReasonHasItsBound() {
        #expect(GeneratorHealthTracker.reasons(Sample(polls: 100, latePolls: 1)).isEmpty)
        #expect(GeneratorHealthTracker.reasons(Sample(polls: 100, latePolls: 2)) == [.pollLateness])
        #expect(GeneratorHealthTracker.reasons(Sample(polls: 0, latePolls: 0)).isEmpty)
        #expect(GeneratorHealthTracker.reasons(Sample(held: true)) == [.fleetHeld])
        #expect(GeneratorHealthTracker.reasons(Sample(callsWaitingForSlot: 3)) == [.callsAtCap])
        #expect(GeneratorHealthTracker.reasons(Sample(cpuShare: 0.94)).isEmpty)
        #expect(GeneratorHealthTracker.reasons(Sample(cpuShare: 0.97)) == [.cpuSaturated])
    }

    @Test func windowsOpenAndCloseWithTheSamplesAndCountTimeByReason() {
        var tracker = GeneratorHealthTracker()
        tracker.observe(Sample(polls: 10), atMs: 1_000)
        #expect(!tracker.isBehind)
        tracker.observe(Sample(polls: 10, latePolls: 5), atMs: 2_000)
        tracker.observe(Sample(polls: 10, latePolls: 5, callsWaitingForSlot: 4), atMs: 3_000)
        #expect(tracker.isBehind)
        #expect(tracker.open?.reasons == [.pollLateness, .callsAtCap])
        tracker.observe(Sample(polls: 10), atMs: 4_000)
        #expect(!tracker.isBehind)
        #expect(tracker.closed == [GeneratorHealthTracker.Window(startMs: 1_000, endMs: 3_000, reasons: [.pollLateness, .callsAtCap])])
        #expect(tracker.behindMs[.pollLateness] == 2_000)
        #expect(tracker.behindMs[.callsAtCap] == 1_000)
        tracker.observe(Sample(held: true), atMs: 5_000)
        #expect(tracker.windowCount == 2)
        let status = tracker.status
        #expect(status["behind"] == true)
        #expect(status["reasons"] == ["fleet-held"])
        #expect(status["windows"] == 2)
        #expect(status["recentWindows"]?.arrayValue?.count == 2)
        #expect(status["recentWindows"]?.arrayValue?.last?["end"] == .null)
        #expect(status["behindSeconds"]?["poll-lateness"] == 2.0)
    }

    @Test func onlyTheLastWindowsAreKept() {
        var tracker = GeneratorHealthTracker()
        for second in 0..<(2 * GeneratorHealthTracker.keptWindows + 10) {
            tracker.observe(Sample(held: second % 2 == 0), atMs: Int64(second) * 1_000)
        }
        #expect(tracker.closed.count == GeneratorHealthTracker.keptWindows)
        #expect(tracker.windowCount == GeneratorHealthTracker.keptWindows + 5)
    }

    @Test func liveFiguresCountPollsSentOverASecondLate() {
        let stats = LiveStats()
        let onTime = PollAttempt(
            code: "A",
            plannedEpochMs: 10_000,
            sentEpochMs: 10_900,
            latencyMs: 2,
            httpStatus: 200,
            outcome: .pending,
            nextDelayMs: 5_000
        )
        let late = PollAttempt(
            code: "A",
            plannedEpochMs: 10_000,
            sentEpochMs: 11_500,
            latencyMs: 2,
            httpStatus: 200,
            outcome: .pending,
            nextDelayMs: 5_000
        )
        stats.record([DeviceStep(device: "a", polls: [onTime], epochMs: 11_000), DeviceStep(device: "b", polls: [late], epochMs: 11_500)])
        let totals = stats.recentTotals(nowSecond: 12, seconds: 10)
        #expect(totals.polls == 2 && totals.late == 1)
        #expect(stats.recentTotals(nowSecond: 30, seconds: 10).polls == 0)
    }
}
