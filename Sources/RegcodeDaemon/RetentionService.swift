import Foundation
import Logging
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle

/// Prunes the poll and event logs on a schedule, so week-long soaks stay bounded.
struct RetentionService: Service {
    let store: RegcodeStore
    let retention: RetentionConfiguration
    let logger: Logger
    var period: Duration = .seconds(600)

    func run() async throws {
        guard retention.pollAttempts != nil || retention.events != nil else {
            // Nothing to prune, but a service that returns early stops the whole group: wait for shutdown.
            try? await gracefulShutdown()
            return
        }
        while !Task.isCancelled {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            do {
                let store = self.store
                let retention = self.retention
                let removed = try await store.prune(
                    pollAttemptsBefore: retention.pollAttempts.map { now - $0.milliseconds },
                    eventsBefore: retention.events.map { now - $0.milliseconds }
                )
                if removed.polls > 0 || removed.events > 0 {
                    logger.info("pruned logs", metadata: ["poll_attempts": "\(removed.polls)", "events": "\(removed.events)"])
                }
            } catch {
                logger.error("pruning failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
            } catch {
                return
            }
        }
    }
}
