import ControlRPC
import Testing

@Suite("EventBroadcaster", .timeLimit(.minutes(1)))
struct EventBroadcasterTests {
    @Test func everySubscriberGetsEveryEventInOrder() async {
        let broadcaster = EventBroadcaster<Int>(bufferSize: 16)
        let first = broadcaster.subscribe()
        let second = broadcaster.subscribe()
        broadcaster.publish([1, 2, 3])
        broadcaster.publish(4)
        for subscription in [first, second] {
            var received: [Int] = []
            for _ in 0..<4 { received.append(await subscription.next() ?? -1) }
            #expect(received == [1, 2, 3, 4])
        }
        #expect(broadcaster.subscriberCount == 2)
    }

    @Test func eventsBeforeSubscribingAreNotDelivered() async {
        let broadcaster = EventBroadcaster<Int>()
        broadcaster.publish(1)
        let subscription = broadcaster.subscribe()
        broadcaster.publish(2)
        #expect(await subscription.next() == 2)
    }

    @Test func fullBufferCutsOffOnlyThatSubscriberAndDropsItsBuffer() async {
        let broadcaster = EventBroadcaster<Int>(bufferSize: 4)
        let fast = broadcaster.subscribe()
        let slow = broadcaster.subscribe()
        for round in 0..<3 {
            broadcaster.publish(Array(round * 3..<round * 3 + 3))
            for expected in round * 3..<round * 3 + 3 {
                #expect(await fast.next() == expected)
            }
        }
        #expect(slow.termination == .cutOff(bufferSize: 4))
        #expect(slow.bufferedCount == 0)
        #expect(await slow.next() == nil)
        #expect(fast.termination == nil)
        #expect(broadcaster.subscriberCount == 1)
        #expect(broadcaster.cutOffCount == 1)
        broadcaster.publish(100)
        #expect(await fast.next() == 100)
    }

    @Test func bufferHoldsExactlyBufferSizeEvents() {
        let broadcaster = EventBroadcaster<Int>(bufferSize: 3)
        let subscription = broadcaster.subscribe()
        broadcaster.publish([1, 2, 3])
        #expect(subscription.termination == nil)
        #expect(subscription.bufferedCount == 3)
        broadcaster.publish(4)
        #expect(subscription.termination == .cutOff(bufferSize: 3))
    }

    @Test func filteredEventsTakeNoRoom() async {
        let broadcaster = EventBroadcaster<Int>(bufferSize: 2)
        let evens = broadcaster.subscribe(where: { $0.isMultiple(of: 2) })
        broadcaster.publish(Array(1...5))
        #expect(evens.termination == nil)
        #expect(await evens.next() == 2)
        #expect(await evens.next() == 4)
    }

    @Test func cancelAndReleaseUnregister() {
        let broadcaster = EventBroadcaster<Int>()
        let kept = broadcaster.subscribe()
        do {
            _ = broadcaster.subscribe()
        }
        #expect(broadcaster.subscriberCount == 1)
        kept.cancel()
        kept.cancel()
        #expect(kept.termination == .cancelled)
        #expect(broadcaster.subscriberCount == 0)
        #expect(broadcaster.cutOffCount == 0)
    }

    @Test func cancellingTheConsumingTaskEndsTheSubscription() async throws {
        let broadcaster = EventBroadcaster<Int>()
        let subscription = broadcaster.subscribe()
        let consumer = Task {
            var count = 0
            for await _ in subscription { count += 1 }
            return count
        }
        broadcaster.publish([1, 2])
        #expect(try await eventually { subscription.bufferedCount == 0 })
        consumer.cancel()
        #expect(await consumer.value == 2)
        #expect(subscription.termination == .cancelled)
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func finishDeliversWhatIsBufferedThenEnds() async {
        let broadcaster = EventBroadcaster<Int>()
        let subscription = broadcaster.subscribe()
        broadcaster.publish([1, 2])
        broadcaster.finish()
        broadcaster.publish(3)
        var received: [Int] = []
        for await event in subscription { received.append(event) }
        #expect(received == [1, 2])
        #expect(subscription.termination == .finished)
        let late = broadcaster.subscribe()
        #expect(late.termination == .finished)
        #expect(await late.next() == nil)
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func waitForTerminationReportsTheReason() async {
        let broadcaster = EventBroadcaster<Int>(bufferSize: 1)
        let subscription = broadcaster.subscribe()
        async let termination = subscription.waitForTermination()
        try? await Task.sleep(for: .milliseconds(20))
        broadcaster.publish([1, 2])
        #expect(await termination == .cutOff(bufferSize: 1))
        #expect(await subscription.waitForTermination() == .cutOff(bufferSize: 1))
    }

    @Test func cancelledWaitForTerminationReturnsNil() async {
        let broadcaster = EventBroadcaster<Int>()
        let subscription = broadcaster.subscribe()
        let waiter = Task { await subscription.waitForTermination() }
        try? await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(subscription.termination == nil)
    }
}
