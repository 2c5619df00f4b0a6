import NIOCore

/// Runs a task's jobs on one event loop.
///
/// A subscription's task prefers its connection's loop: an event is then written and flushed in the loop, and
/// the write's completion resumes the task without another hop, so an event costs one hand-over between
/// threads (publisher to loop) instead of three. NIO makes an event loop an actor's `SerialExecutor`, not a
/// `TaskExecutor`; this adapter is that piece.
final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
