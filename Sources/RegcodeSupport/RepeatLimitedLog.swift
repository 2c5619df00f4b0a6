import Logging
import Synchronization

/// Which repeats of a log line to write: the first of each reason at once, then at most one per interval carrying
/// the count of those held back, so a flood (refused connections, failing accepts) costs a line per interval, not
/// one per occurrence.
package struct RepeatLimiter<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What to do with one occurrence.
    package enum Decision: Equatable, Sendable {
        /// Write it; `suppressed` repeats of the same reason were held back over `over` before it (0 and nil for the
        /// first occurrence after a quiet interval).
        case write(suppressed: Int, over: Duration?)
        /// Count it and stay quiet.
        case suppress
    }

    private struct Reason {
        var lastWritten: Instant
        var suppressed: Int
    }

    package let interval: Duration
    private var reasons: [String: Reason] = [:]

    package init(interval: Duration) {
        self.interval = interval
    }

    /// Records one occurrence of `reason` at `now`.
    package mutating func record(_ reason: String, now: Instant) -> Decision {
        guard var entry = self.reasons[reason] else {
            self.reasons[reason] = Reason(lastWritten: now, suppressed: 0)
            return .write(suppressed: 0, over: nil)
        }
        let elapsed = entry.lastWritten.duration(to: now)
        guard elapsed >= self.interval else {
            entry.suppressed += 1
            self.reasons[reason] = entry
            return .suppress
        }
        let suppressed = entry.suppressed
        self.reasons[reason] = Reason(lastWritten: now, suppressed: 0)
        return .write(suppressed: suppressed, over: suppressed > 0 ? elapsed : nil)
    }
}

/// A logger that rate-limits its own repeats: one line per reason per interval, each saying how many were held back
/// ("refused connections over the cap; 19532 more in the last 10 s"). Shared by every listener.
package final class RepeatLimitedLog<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    private let logger: Logger
    private let clock: C
    private let limiter: Mutex<RepeatLimiter<C.Instant>>

    package init(logger: Logger, interval: Duration = .seconds(10), clock: C) {
        self.logger = logger
        self.clock = clock
        self.limiter = Mutex(RepeatLimiter(interval: interval))
    }

    /// Logs `message` under `reason` unless a line for the same reason went out less than an interval ago.
    /// - Returns: whether a line was written.
    @discardableResult
    package func log(
        _ level: Logger.Level,
        reason: String,
        _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> Logger.Metadata = [:]
    ) -> Bool {
        let now = self.clock.now
        let decision = self.limiter.withLock { $0.record(reason, now: now) }
        guard case .write(let suppressed, let over) = decision else { return false }
        var text = message()
        var metadata = metadata()
        if suppressed > 0, let over {
            text += "; \(suppressed) more in the last \(Int(over.seconds.rounded())) s"
            metadata["log.suppressed"] = "\(suppressed)"
        }
        self.logger.log(level: level, "\(text)", metadata: metadata)
        return true
    }
}

extension RepeatLimitedLog where C == ContinuousClock {
    package convenience init(logger: Logger, interval: Duration = .seconds(10)) {
        self.init(logger: logger, interval: interval, clock: ContinuousClock())
    }
}
