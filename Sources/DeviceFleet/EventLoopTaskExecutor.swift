import NIOCore

/// Runs tasks on one SwiftNIO event loop: the loop the fleet's actor and its HTTP connections live on.
///
/// Written here because SwiftNIO offers an event loop as a `SerialExecutor` (for actors) but not yet as a
/// `TaskExecutor` (for child tasks). With both, a poll's call, its answer and the engine step that follows
/// run on one thread; otherwise every answer hops from the event loop to the global executor and back to the
/// actor, two thread wake-ups per poll.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
