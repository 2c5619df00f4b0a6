import RegcodeEngine
import RegcodeTestSupport
import Testing

@testable import DeviceFleet

@Suite struct TimerQueueTests {
    typealias Instant = ManualClock.Instant

    @Test func popsDueTimersInDeadlineOrderAndSkipsCancelledOnes() {
        var queue = TimerQueue<Instant, String>()
        queue.schedule("b", at: Instant(offset: .seconds(2)))
        queue.schedule("a", at: Instant(offset: .seconds(1)))
        queue.schedule("c", at: Instant(offset: .seconds(3)))
        queue.cancel("b")
        #expect(queue.nextDeadline() == Instant(offset: .seconds(1)))
        #expect(queue.popDue(now: Instant(offset: .seconds(2))) == ["a"])
        #expect(queue.nextDeadline() == Instant(offset: .seconds(3)))
        #expect(queue.popDue(now: Instant(offset: .seconds(10))) == ["c"])
        #expect(queue.nextDeadline() == nil)
    }

    @Test func rearmingReplacesTheEarlierDeadline() {
        var queue = TimerQueue<Instant, String>()
        queue.schedule("a", at: Instant(offset: .seconds(1)))
        queue.schedule("a", at: Instant(offset: .seconds(5)))
        #expect(queue.popDue(now: Instant(offset: .seconds(2))).isEmpty)
        #expect(queue.popDue(now: Instant(offset: .seconds(5))) == ["a"])
        #expect(queue.armedCount == 0)
    }
}
