import RegcodeEngine
import RegcodeTestSupport
import Testing

@testable import DeviceFleet

@Suite struct TimerQueueTests {
    typealias Instant = ManualClock.Instant

    @Test func popsDueTimersInDeadlineOrderAndSkipsCancelledOnes() {
        var queue = TimerQueue<String>()
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
        var queue = TimerQueue<String>()
        queue.schedule("a", at: Instant(offset: .seconds(1)))
        queue.schedule("a", at: Instant(offset: .seconds(5)))
        #expect(queue.popDue(now: Instant(offset: .seconds(2))).isEmpty)
        #expect(queue.popDue(now: Instant(offset: .seconds(5))) == ["a"])
        #expect(queue.armedCount == 0)
    }
}

@Suite struct TimerQueueModelTests {
    typealias Instant = ManualClock.Instant

    /// 20,000 random arms, re-arms, cancels and pops over a few keys against a plain dictionary of deadlines.
    @Test func agreesWithADictionaryOfDeadlines() {
        var queue = TimerQueue<String>()
        var model: [String: (deadline: Int, sequence: Int)] = [:]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let keys = (0..<12).map { "stb-\($0)" }
        var now = 0
        for sequence in 1...20_000 {
            let key = keys[next(keys.count)]
            switch next(10) {
            case 0..<5:
                let deadline = now + next(50)
                queue.schedule(key, at: Instant(offset: .milliseconds(deadline)))
                model[key] = (deadline, sequence)
            case 5..<7:
                queue.cancel(key)
                model[key] = nil
            default:
                now += next(20)
                let due = model.filter { $0.value.deadline <= now }
                    .sorted { ($0.value.deadline, $0.value.sequence) < ($1.value.deadline, $1.value.sequence) }.map(\.key)
                for key in due { model[key] = nil }
                let popped = queue.popDue(now: Instant(offset: .milliseconds(now)))
                guard popped == due else {
                    Issue.record("step \(sequence): popped \(popped), expected \(due)")
                    return
                }
            }
            let earliest = model.values.map(\.deadline).min().map { Instant(offset: .milliseconds($0)) }
            guard queue.nextDeadline() == earliest, queue.armedCount == model.count else {
                Issue.record("step \(sequence): next \(String(describing: queue.nextDeadline())), armed \(queue.armedCount)")
                return
            }
        }
        // Slots are reused: never more than the distinct keys.
        #expect(queue.slotCount <= keys.count)
    }

    @Test func aCancelledKeyFreesItsSlotForAnotherKey() {
        var queue = TimerQueue<String>()
        queue.schedule("a", at: Instant(offset: .seconds(1)))
        queue.cancel("a")
        #expect(queue.nextDeadline() == nil)  // the stale entry leaves the heap, the slot is free
        queue.schedule("b", at: Instant(offset: .seconds(2)))
        #expect(queue.slotCount == 1)
        #expect(queue.popDue(now: Instant(offset: .seconds(2))) == ["b"])
    }
}

@Suite struct TimerQueueInstantTests {
    typealias Instant = ManualClock.Instant

    @Test func deadlinesBeforeTheFirstAndFarAfterItKeepTheirOrderAndExactInstants() {
        var queue = TimerQueue<String>()
        let first = Instant(offset: .seconds(100))
        queue.schedule("first", at: first)
        queue.schedule("earlier", at: Instant(offset: .seconds(3)))
        queue.schedule("a-day-later", at: first.advanced(by: .seconds(86_400)))
        queue.schedule("just-after", at: first.advanced(by: .nanoseconds(1)))
        #expect(queue.nextDeadline() == Instant(offset: .seconds(3)))
        #expect(queue.popDue(now: first) == ["earlier", "first"])
        #expect(queue.nextDeadline() == first.advanced(by: .nanoseconds(1)))
        #expect(queue.popDue(now: first.advanced(by: .nanoseconds(1))) == ["just-after"])
        #expect(queue.popDue(now: first.advanced(by: .seconds(86_399))).isEmpty)
        #expect(queue.popDue(now: first.advanced(by: .seconds(86_400))) == ["a-day-later"])
    }

    @Test func withinOneNanosecondTheExactInstantDecides() {
        var queue = TimerQueue<String>()
        let base = Instant(offset: .seconds(1))
        queue.schedule("origin", at: base)
        queue.cancel("origin")
        let threeQuarters = base.advanced(by: .nanoseconds(3) / 4)
        queue.schedule("a", at: threeQuarters)
        #expect(queue.popDue(now: base.advanced(by: .nanoseconds(1) / 2)).isEmpty)
        #expect(queue.nextDeadline() == threeQuarters)
        #expect(queue.popDue(now: threeQuarters) == ["a"])
    }
}
