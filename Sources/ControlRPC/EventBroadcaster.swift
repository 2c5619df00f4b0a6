import DequeModule
import Synchronization

/// Fans live events out to subscribers, each with its own bounded buffer.
///
/// `publish` never blocks: an event is appended to every matching subscriber's buffer, and a subscriber whose buffer
/// is already full is **cut off** (its buffer is dropped and its sequence ends with ``EventSubscription/Termination/cutOff(bufferSize:)``),
/// so one slow consumer neither stalls the publisher nor the other subscribers, and memory stays bounded by
/// `bufferSize` events per subscriber.
///
/// ## Replay, then live, without gaps
/// Events carry a gap-free sequence number and are stored before they are published, in sequence order, by one
/// publisher at a time. A subscriber that wants history as well:
/// 1. calls ``subscribe(where:)`` first: from that moment every published event lands in its buffer;
/// 2. reads stored events after its `since` from the database and sends them, remembering the highest `seq` sent;
/// 3. then sends live events, skipping those whose `seq` is not above the highest one already sent.
///
/// An event stored before step 1 but published after it shows up in both places and step 3 drops it; an event
/// published before step 1 was stored before step 2's read and is in the replay. ``Subscription`` does steps 2–3.
package final class EventBroadcaster<Element: Sendable>: Sendable {
    /// The most events one subscriber may have waiting before it is cut off.
    package let bufferSize: Int
    private let state = Mutex(State())

    private struct State {
        var subscribers: [UInt64: SubscriberBox<Element>] = [:]
        var nextID: UInt64 = 0
        var cutOffCount = 0
        var isFinished = false
    }

    /// - Parameter bufferSize: The per-subscriber limit; must be at least 1.
    package init(bufferSize: Int = 4096) {
        precondition(bufferSize >= 1, "a subscriber buffer holds at least one event")
        self.bufferSize = bufferSize
    }

    /// Registers a subscriber; events published from now on (and passing `isIncluded`) are buffered for it.
    ///
    /// `isIncluded` runs inside `publish` under a lock: keep it cheap and never call back into the broadcaster.
    /// Filtering here, rather than in the consumer, keeps events a subscriber does not want out of its buffer.
    package func subscribe(where isIncluded: (@Sendable (Element) -> Bool)? = nil) -> EventSubscription<Element> {
        let box = self.state.withLock { state -> SubscriberBox<Element> in
            let id = state.nextID
            state.nextID += 1
            let box = SubscriberBox<Element>(id: id, capacity: self.bufferSize, filter: isIncluded)
            if state.isFinished {
                _ = box.terminate(.finished, dropBuffered: true)
            } else {
                state.subscribers[id] = box
            }
            return box
        }
        return EventSubscription(box: box, unregister: { [weak self] id in self?.remove(id) })
    }

    /// Delivers `event` to every subscriber; never waits.
    package func publish(_ event: Element) {
        self.publish(CollectionOfOne(event))
    }

    /// Delivers `events`, in order, to every subscriber; never waits.
    package func publish(_ events: some Collection<Element>) {
        guard !events.isEmpty else { return }
        let wakeUps = self.state.withLock { state -> [WakeUp<Element>] in
            guard !state.isFinished else { return [] }
            var wakeUps: [WakeUp<Element>] = []
            var cutOff: [UInt64] = []
            for (id, box) in state.subscribers {
                if box.deliver(events, into: &wakeUps) {
                    cutOff.append(id)
                }
            }
            for id in cutOff {
                state.subscribers[id] = nil
            }
            state.cutOffCount += cutOff.count
            return wakeUps
        }
        for wakeUp in wakeUps { wakeUp.resume() }
    }

    /// Ends every subscription (after its buffered events) and refuses new ones; for shutdown.
    package func finish() {
        let boxes = self.state.withLock { state -> [SubscriberBox<Element>] in
            state.isFinished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for box in boxes {
            for wakeUp in box.terminate(.finished, dropBuffered: false) { wakeUp.resume() }
        }
    }

    /// Subscribers currently registered (for metrics).
    package var subscriberCount: Int {
        self.state.withLock { $0.subscribers.count }
    }

    /// Subscribers cut off for falling behind since this broadcaster was created (for metrics).
    package var cutOffCount: Int {
        self.state.withLock { $0.cutOffCount }
    }

    private func remove(_ id: UInt64) {
        self.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }
}

/// One subscriber's view of an ``EventBroadcaster``: an async sequence of the events published since it subscribed.
///
/// Single consumer: iterate it from one task at a time. Cancelling the iterating task, calling ``cancel()`` or
/// releasing the last reference ends the subscription and unregisters it.
package final class EventSubscription<Element: Sendable>: AsyncSequence, Sendable {
    package typealias Failure = Never

    /// Why a subscription ended.
    package enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// The subscriber had `bufferSize` events waiting when another one arrived.
        case cutOff(bufferSize: Int)
        /// The consumer cancelled or went away.
        case cancelled
        /// The broadcaster was finished (shutdown).
        case finished

        package var description: String {
            switch self {
            case .cutOff(let size): "subscriber fell behind: its buffer of \(size) events was full"
            case .cancelled: "subscription cancelled"
            case .finished: "event stream finished"
            }
        }
    }

    private let box: SubscriberBox<Element>
    private let unregister: @Sendable (UInt64) -> Void

    fileprivate init(box: SubscriberBox<Element>, unregister: @escaping @Sendable (UInt64) -> Void) {
        self.box = box
        self.unregister = unregister
    }

    deinit {
        self.cancel()
    }

    /// Why the subscription ended; nil while it is live.
    package var termination: Termination? {
        self.box.state.withLock { $0.termination }
    }

    /// Events waiting to be consumed.
    package var bufferedCount: Int {
        self.box.state.withLock { $0.buffer.count }
    }

    /// Ends the subscription once its buffered events are consumed (termination ``Termination/finished``); idempotent.
    package func finish() {
        for wakeUp in self.box.terminate(.finished, dropBuffered: false) { wakeUp.resume() }
        self.unregister(self.box.id)
    }

    /// Ends the subscription, dropping buffered events; idempotent.
    package func cancel() {
        for wakeUp in self.box.terminate(.cancelled, dropBuffered: true) { wakeUp.resume() }
        self.unregister(self.box.id)
    }

    /// The next event; nil once the subscription has ended and its buffer is drained.
    ///
    /// Cancelling the waiting task cancels the subscription.
    package func next() async -> Element? {
        switch self.box.poll() {
        case .element(let element): return element
        case .ended: return nil
        case .empty: break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                self.box.park(continuation)
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Waits until the subscription ends and says why; nil if the waiting task is cancelled first.
    package func waitForTermination() async -> Termination? {
        if let termination = self.termination { return termination }
        let token = self.box.makeToken()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination?, Never>) in
                self.box.parkUntilTerminated(token: token, continuation)
            }
        } onCancel: {
            self.box.unparkTerminationWaiter(token: token)
        }
    }

    package func makeAsyncIterator() -> Iterator {
        Iterator(subscription: self)
    }

    package struct Iterator: AsyncIteratorProtocol {
        package typealias Failure = Never
        let subscription: EventSubscription<Element>

        package mutating func next() async -> Element? {
            await self.subscription.next()
        }
    }
}

/// A continuation to resume once no lock is held.
private struct WakeUp<Element: Sendable> {
    enum Kind {
        case element(CheckedContinuation<Element?, Never>, Element?)
        case termination(CheckedContinuation<EventSubscription<Element>.Termination?, Never>, EventSubscription<Element>.Termination)
    }

    var kind: Kind

    func resume() {
        switch self.kind {
        case .element(let continuation, let element): continuation.resume(returning: element)
        case .termination(let continuation, let termination): continuation.resume(returning: termination)
        }
    }
}

/// A subscriber's buffer and waiters. Lock order: the broadcaster's lock, then a box's lock, never the reverse.
private final class SubscriberBox<Element: Sendable>: Sendable {
    typealias Termination = EventSubscription<Element>.Termination

    struct State {
        var buffer: Deque<Element> = []
        var consumer: CheckedContinuation<Element?, Never>?
        var termination: Termination?
        var terminationWaiters: [UInt64: CheckedContinuation<Termination?, Never>] = [:]
        var nextToken: UInt64 = 0
    }

    enum Poll {
        case element(Element)
        case ended
        case empty
    }

    let id: UInt64
    let capacity: Int
    let filter: (@Sendable (Element) -> Bool)?
    let state = Mutex(State())

    init(id: UInt64, capacity: Int, filter: (@Sendable (Element) -> Bool)?) {
        self.id = id
        self.capacity = capacity
        self.filter = filter
    }

    /// Buffers the matching `events` or hands one straight to a waiting consumer; true when this cut the subscriber off.
    func deliver(_ events: some Collection<Element>, into wakeUps: inout [WakeUp<Element>]) -> Bool {
        self.state.withLock { state in
            guard state.termination == nil else { return false }
            for event in events {
                if let filter = self.filter, !filter(event) { continue }
                if let consumer = state.consumer {
                    state.consumer = nil
                    wakeUps.append(WakeUp(kind: .element(consumer, event)))
                } else if state.buffer.count < self.capacity {
                    state.buffer.append(event)
                } else {
                    wakeUps += Self.end(&state, .cutOff(bufferSize: self.capacity), dropBuffered: true)
                    return true
                }
            }
            return false
        }
    }

    /// Marks the subscription ended (first reason wins) and returns the waiters to wake.
    func terminate(_ termination: Termination, dropBuffered: Bool) -> [WakeUp<Element>] {
        self.state.withLock { state in
            guard state.termination == nil else { return [] }
            return Self.end(&state, termination, dropBuffered: dropBuffered)
        }
    }

    private static func end(_ state: inout State, _ termination: Termination, dropBuffered: Bool) -> [WakeUp<Element>] {
        state.termination = termination
        if dropBuffered {
            // Frees the memory now rather than when the slow consumer finally gets around to it.
            state.buffer = []
        }
        var wakeUps: [WakeUp<Element>] = []
        if let consumer = state.consumer {
            state.consumer = nil
            wakeUps.append(WakeUp(kind: .element(consumer, nil)))
        }
        for waiter in state.terminationWaiters.values {
            wakeUps.append(WakeUp(kind: .termination(waiter, termination)))
        }
        state.terminationWaiters = [:]
        return wakeUps
    }

    func poll() -> Poll {
        self.state.withLock { state in
            if let element = state.buffer.popFirst() { return .element(element) }
            return state.termination == nil ? .empty : .ended
        }
    }

    func park(_ continuation: CheckedContinuation<Element?, Never>) {
        let immediate = self.state.withLock { state -> Poll in
            if let element = state.buffer.popFirst() { return .element(element) }
            // Also covers a cancellation that ran before this: it terminated the subscription.
            if state.termination != nil { return .ended }
            precondition(state.consumer == nil, "EventSubscription supports a single consumer")
            state.consumer = continuation
            return .empty
        }
        switch immediate {
        case .element(let element): continuation.resume(returning: element)
        case .ended: continuation.resume(returning: nil)
        case .empty: break
        }
    }

    func makeToken() -> UInt64 {
        self.state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
    }

    private enum ParkOutcome {
        case terminated(Termination)
        case cancelled
        case parked
    }

    func parkUntilTerminated(token: UInt64, _ continuation: CheckedContinuation<Termination?, Never>) {
        let outcome = self.state.withLock { state -> ParkOutcome in
            if let termination = state.termination { return .terminated(termination) }
            // The cancellation handler may have run before the waiter was parked; it found nothing to wake.
            if Task.isCancelled { return .cancelled }
            state.terminationWaiters[token] = continuation
            return .parked
        }
        switch outcome {
        case .terminated(let termination): continuation.resume(returning: termination)
        case .cancelled: continuation.resume(returning: nil)
        case .parked: break
        }
    }

    func unparkTerminationWaiter(token: UInt64) {
        let waiter = self.state.withLock { $0.terminationWaiters.removeValue(forKey: token) }
        waiter?.resume(returning: nil)
    }
}
