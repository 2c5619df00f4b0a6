import NIOPosix

/// Runs a task's jobs on the threads of an `NIOThreadPool`: work that may take a while (reading a large request) then
/// runs beside the event loops rather than on them, so the connections they carry are served meanwhile.
final class ThreadPoolTaskExecutor: TaskExecutor, Sendable {
    private let pool: NIOThreadPool

    init(_ pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // A job must run even once the pool is shut down (its task would otherwise never resume): the pool says so
        // by handing over a cancelled state, and the job runs anyway.
        self.pool.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
