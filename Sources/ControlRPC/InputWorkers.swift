import DequeModule
import NIOCore
import NIOPosix
import Synchronization

/// Where control requests are read and answered: a few threads of their own, beside the event loops, with a bound
/// on how many requests are read at once.
///
/// The daemon runs Swift concurrency on its event loops, so a request parsed where it arrives holds up every
/// connection on that loop (the fleet's polls among them) for as long as it takes. Here a large line costs its parser
/// thread instead, and a flood of them waits its turn: at most ``maxRunning`` requests are parsed at once, at most
/// ``maxWaiting`` more wait for a turn in arrival order, and past that a request is refused at once with a retryable
/// error rather than queued.
///
/// A turn covers the reading only. The method's answer runs on the same threads (``answer(_:)``) without a turn:
/// an answer that waits (a reset waiting for a locked database) holds no thread while it waits, and must not hold a
/// turn either, or a few such calls would leave `daemon.status` queued behind them.
package final class InputWorkers: Sendable {
    /// The workers both control listeners share: `max(1, cores / 2)` threads (one on a 2-core machine, so the event
    /// loops keep a core whatever arrives), 16 requests at once, 1,024 waiting. Started on first use; lives as long
    /// as the process, as NIO's own singletons do.
    package static let shared = InputWorkers(threads: max(1, System.coreCount / 2), maxRunning: 16, maxWaiting: 1024)

    /// Requests parsed or dispatched at once; parsing itself is also bounded by the threads.
    package let maxRunning: Int
    /// Requests waiting for a turn beyond ``maxRunning``; past it a request is refused.
    package let maxWaiting: Int
    let pool: NIOThreadPool
    let executor: ThreadPoolTaskExecutor
    private let state: Mutex<State>

    private struct State {
        var running = 0
        var waiting = Deque<CheckedContinuation<Bool, Never>>()
        /// Requests refused for want of a turn, since start.
        var refused = 0
        /// Requests admitted, since start.
        var admitted = 0
    }

    package init(threads: Int, maxRunning: Int, maxWaiting: Int) {
        precondition(threads > 0 && maxRunning > 0 && maxWaiting >= 0, "input workers need a thread and a turn")
        self.pool = NIOThreadPool(numberOfThreads: threads)
        self.pool.start()
        self.executor = ThreadPoolTaskExecutor(self.pool)
        self.maxRunning = maxRunning
        self.maxWaiting = maxWaiting
        self.state = Mutex(State())
    }

    /// Stops the threads once the work in hand is done; later requests run where they are called from.
    package func shutdown() async throws {
        try await self.pool.shutdownGracefully()
    }

    /// Requests admitted and refused since start, and waiting now.
    package var counts: (admitted: Int, refused: Int, waiting: Int) {
        self.state.withLock { ($0.admitted, $0.refused, $0.waiting.count) }
    }

    /// Runs `body` on the workers' threads once a turn is free; nil, without running it, when too many wait already.
    package func run<Result: Sendable>(_ body: @Sendable () async -> Result) async -> Result? {
        guard await self.enter() else { return nil }
        defer { self.leave() }
        return await withTaskExecutorPreference(self.executor) { await body() }
    }

    /// Runs `body` on the workers' threads without taking a turn: a method's answer, which may wait (on storage, on
    /// a device) but whose input was already read within a turn.
    package func answer<Result: Sendable>(_ body: @Sendable () async -> Result) async -> Result {
        await withTaskExecutorPreference(self.executor) { await body() }
    }

    /// Takes a turn, waiting for one if needed; false when too many wait already.
    private func enter() async -> Bool {
        // Not cancellable on purpose: a waiter's turn comes within a bounded time (turns are few, and each request's
        // cost is bounded by the input limits), and leaving the queue early would need a second path to keep count.
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = self.state.withLock { state in
                if state.running < self.maxRunning {
                    state.running += 1
                    state.admitted += 1
                    return true
                }
                guard state.waiting.count < self.maxWaiting else {
                    state.refused += 1
                    return false
                }
                state.waiting.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func leave() {
        let next: CheckedContinuation<Bool, Never>? = self.state.withLock { state in
            guard let next = state.waiting.popFirst() else {
                state.running -= 1
                return nil
            }
            // The turn passes straight to the next waiter: `running` stays.
            state.admitted += 1
            return next
        }
        next?.resume(returning: true)
    }
}
