import Logging
import RegcodeSupport
import ServiceLifecycle

/// Ends a timed run (`duration`, `--duration`): once the length has passed it returns, and the group, told to
/// shut down gracefully when this service ends, stops as on SIGTERM — polls in flight finish, the last steps
/// are stored — so the run's report reads a complete log.
struct RunLengthService: Service {
    let length: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: length) }
        } catch {
            // Stopped before the end (a signal): nothing to announce.
            return
        }
        logger.notice("the run's duration has passed: stopping", metadata: ["duration": "\(DurationParser.format(length))"])
    }
}
