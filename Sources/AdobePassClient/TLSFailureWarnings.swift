import BackendHTTP
import Foundation
import Logging
import Synchronization

/// One warning per distinct TLS failure per minute, naming the fix: a fleet of thousands of devices that all meet an
/// untrusted certificate must not write thousands of lines, nor hide the reason at debug level.
final class TLSFailureWarnings: Sendable {
    private let interval: Duration
    private let lastWarned = Mutex<[String: ContinuousClock.Instant]>([:])

    init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// Logs `failure` at warning unless the same code was logged within the interval.
    func report(_ failure: TLSHandshakeFailure, backend: String, logger: Logger) {
        let now = ContinuousClock.now
        let due = lastWarned.withLock { last in
            if let previous = last[failure.code], previous.duration(to: now) < interval { return false }
            last[failure.code] = now
            return true
        }
        guard due else { return }
        logger.warning(
            "TLS connection to the backend failed: \(failure.fix)",
            metadata: ["tls.failure": "\(failure.code)", "error": "\(failure.description)", "backend": "\(backend)"]
        )
    }
}
