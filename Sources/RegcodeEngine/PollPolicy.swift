/// How a device paces its polls: the polling contract of the product, every value configurable.
package struct PollPolicy: Sendable, Equatable, Codable {
    /// What a device does when its code expires unanswered.
    package enum ExpiryBehaviour: Sendable, Equatable, Codable {
        /// Stop, report expiry (`status` REG410 + `setAuthenticationStatus(0, …)`).
        case stop
        /// Request a fresh code, at most `times` times per login, before giving up.
        case renew(times: Int)
    }

    /// Base interval between polls (Adobe: "every 3–5 seconds or more").
    package var interval: Duration = .seconds(5)
    /// Relative jitter applied to each interval: 0.1 means ±10 %.
    package var jitter: Double = 0.1
    /// Delay from showing the code to the first poll.
    package var firstPollDelay: Duration = .zero
    /// Start of the error backoff window (defaults to the interval).
    package var backoffBase: Duration? = nil
    /// Upper bound of the error backoff window.
    package var backoffCap: Duration = .seconds(60)
    /// Shortest wait after a 429, whatever `Retry-After` says (Adobe: at least one second).
    package var minimumThrottleWait: Duration = .seconds(1)
    /// Whether 429 and `Retry-After` slow the device down (misbehaving clients ignore them).
    package var honoursThrottle: Bool = true
    /// Consecutive failed polls after which the device gives up (`nil`: until the code expires).
    package var maxConsecutiveErrors: Int? = nil
    /// Transient failures retried when requesting a code, before `status` REG500.
    package var codeRequestRetries: Int = 8
    /// Transient failures (429, 5xx, network) retried at every other stage (registration, token,
    /// configuration, profile, decisions, metadata, logout) before the device reports the failure.
    package var stageRetries: Int = 8
    /// Retries of a call (poll excepted) whose enhanced error asks for them (`action` `retry` or
    /// `retry-after`), before the device reports the failure (Adobe: "limited (i.e. 2-3)").
    package var actionRetries: Int = 3
    /// Start of the back-off window of those retries.
    package var stageBackoffBase: Duration = .seconds(1)
    /// Upper bound of the back-off window of those retries.
    package var stageBackoffCap: Duration = .seconds(30)
    /// New codes a login asks for when the backend says the polled code is unknown (it forgot the
    /// session), before the login ends as failed.
    package var codeRecoveries: Int = 3
    package var onExpiry: ExpiryBehaviour = .stop
    /// Marks a deliberately misbehaving client, which may poll faster than the 3 s floor.
    package var misbehaving: Bool = false

    /// The fastest interval a well-behaved client may use.
    package static let minimumInterval: Duration = .seconds(3)

    package init() {}

    private enum CodingKeys: String, CodingKey {
        case interval, jitter, firstPollDelay, backoffBase, backoffCap, minimumThrottleWait, honoursThrottle
        case maxConsecutiveErrors, codeRequestRetries, stageRetries, actionRetries, stageBackoffBase, stageBackoffCap
        case codeRecoveries, onExpiry, misbehaving
    }

    /// Reads a stored policy; a key an older version did not write keeps its default.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var p = PollPolicy()
        p.interval = try c.decodeIfPresent(Duration.self, forKey: .interval) ?? p.interval
        p.jitter = try c.decodeIfPresent(Double.self, forKey: .jitter) ?? p.jitter
        p.firstPollDelay = try c.decodeIfPresent(Duration.self, forKey: .firstPollDelay) ?? p.firstPollDelay
        p.backoffBase = try c.decodeIfPresent(Duration.self, forKey: .backoffBase)
        p.backoffCap = try c.decodeIfPresent(Duration.self, forKey: .backoffCap) ?? p.backoffCap
        p.minimumThrottleWait = try c.decodeIfPresent(Duration.self, forKey: .minimumThrottleWait) ?? p.minimumThrottleWait
        p.honoursThrottle = try c.decodeIfPresent(Bool.self, forKey: .honoursThrottle) ?? p.honoursThrottle
        p.maxConsecutiveErrors = try c.decodeIfPresent(Int.self, forKey: .maxConsecutiveErrors)
        p.codeRequestRetries = try c.decodeIfPresent(Int.self, forKey: .codeRequestRetries) ?? p.codeRequestRetries
        p.stageRetries = try c.decodeIfPresent(Int.self, forKey: .stageRetries) ?? p.stageRetries
        p.actionRetries = try c.decodeIfPresent(Int.self, forKey: .actionRetries) ?? p.actionRetries
        p.stageBackoffBase = try c.decodeIfPresent(Duration.self, forKey: .stageBackoffBase) ?? p.stageBackoffBase
        p.stageBackoffCap = try c.decodeIfPresent(Duration.self, forKey: .stageBackoffCap) ?? p.stageBackoffCap
        p.codeRecoveries = try c.decodeIfPresent(Int.self, forKey: .codeRecoveries) ?? p.codeRecoveries
        p.onExpiry = try c.decodeIfPresent(ExpiryBehaviour.self, forKey: .onExpiry) ?? p.onExpiry
        p.misbehaving = try c.decodeIfPresent(Bool.self, forKey: .misbehaving) ?? p.misbehaving
        self = p
    }

    /// The effective start of the backoff window.
    package var effectiveBackoffBase: Duration { backoffBase ?? interval }

    /// Problems with the policy, as readable reasons (empty when valid).
    package func validationErrors() -> [String] {
        var errors: [String] = []
        if interval < .zero || (interval == .zero && !misbehaving) { errors.append("interval must be positive") }
        if interval < Self.minimumInterval && !misbehaving {
            errors.append("interval \(interval.seconds) s is under the 3 s floor; mark the device as misbehaving to allow it")
        }
        if !(0...0.5).contains(jitter) { errors.append("jitter must be between 0 and 0.5") }
        if firstPollDelay < .zero { errors.append("first-poll delay must not be negative") }
        if effectiveBackoffBase <= .zero && !misbehaving { errors.append("backoff base must be positive") }
        if backoffCap < effectiveBackoffBase { errors.append("backoff cap must be at least the backoff base") }
        if minimumThrottleWait < .seconds(1) && honoursThrottle {
            errors.append("a client that honours throttling waits at least 1 s after a 429")
        }
        if let maxConsecutiveErrors, maxConsecutiveErrors < 1 { errors.append("max consecutive errors must be at least 1") }
        if codeRequestRetries < 0 { errors.append("code request retries must not be negative") }
        if stageRetries < 0 { errors.append("stage retries must not be negative") }
        if actionRetries < 0 { errors.append("action retries must not be negative") }
        if codeRecoveries < 0 { errors.append("code recoveries must not be negative") }
        if stageBackoffBase <= .zero && !misbehaving { errors.append("stage back-off base must be positive") }
        if stageBackoffCap < stageBackoffBase { errors.append("stage back-off cap must be at least its base") }
        if case .renew(let times) = onExpiry, times < 0 { errors.append("renewals must not be negative") }
        return errors
    }

    /// The wait before the next poll after a normal (pending) answer: interval ± jitter.
    package func nextPollDelay(using rng: inout some RandomNumberGenerator) -> Duration {
        jittered(interval, using: &rng)
    }

    /// The wait after a 429: never under `minimumThrottleWait` nor `Retry-After`, never under the interval.
    package func throttledDelay(retryAfter: Duration?, using rng: inout some RandomNumberGenerator) -> Duration {
        let normal = nextPollDelay(using: &rng)
        guard honoursThrottle else { return normal }
        return max(normal, minimumThrottleWait, retryAfter ?? .zero)
    }

    /// The upper bound of the backoff window after `consecutiveErrors` failures: base·2ⁿ, capped.
    package func backoffCeiling(consecutiveErrors: Int) -> Duration {
        let base = effectiveBackoffBase
        var ceiling = base
        for _ in 0..<max(0, consecutiveErrors) {
            ceiling = ceiling * 2
            if ceiling >= backoffCap { return backoffCap }
        }
        return min(ceiling, backoffCap)
    }

    /// The wait after a transport error or 5xx: full jitter over [base, ceiling], so a failing
    /// backend never sees a device poll faster than its normal interval.
    package func backoffDelay(consecutiveErrors: Int, using rng: inout some RandomNumberGenerator) -> Duration {
        let base = effectiveBackoffBase
        let ceiling = backoffCeiling(consecutiveErrors: consecutiveErrors)
        let spread = ceiling - base
        guard spread > .zero else { return base }
        let fraction = Double.random(in: 0...1, using: &rng)
        return base + spread * fraction
    }

    /// The wait before a request of another stage than polling is retried: full jitter over
    /// [base, min(cap, base·2ⁿ)]; after a 429 never under `minimumThrottleWait` nor `Retry-After`.
    package func stageRetryDelay(
        throttled: Bool,
        retryAfter: Duration?,
        attempt: Int,
        using rng: inout some RandomNumberGenerator
    ) -> Duration {
        var ceiling = stageBackoffBase
        for _ in 0..<max(0, attempt - 1) where ceiling < stageBackoffCap { ceiling = ceiling * 2 }
        ceiling = min(ceiling, stageBackoffCap)
        let spread = ceiling - stageBackoffBase
        let delay = spread > .zero ? stageBackoffBase + spread * Double.random(in: 0...1, using: &rng) : stageBackoffBase
        guard throttled, honoursThrottle else { return delay }
        return max(delay, minimumThrottleWait, retryAfter ?? .zero)
    }

    private func jittered(_ duration: Duration, using rng: inout some RandomNumberGenerator) -> Duration {
        guard jitter > 0 else { return duration }
        let factor = 1 + Double.random(in: -jitter...jitter, using: &rng)
        return duration * factor
    }
}
