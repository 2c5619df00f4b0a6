import NIOCore

/// Runs a task's jobs on one event loop.
///
/// A task that prefers its connection's loop reads, writes and flushes in that loop, and a completed write
/// resumes it without a hop between threads. NIO makes an event loop an actor's `SerialExecutor`, not a
/// `TaskExecutor`; this adapter is that piece.
package final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    private let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
