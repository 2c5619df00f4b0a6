import RegcodeRecords

/// What a threshold can be set on: figures of the report, over the whole run or one fleet.
///
/// Rates are fractions (0.99, or `99%` in an expression), times are milliseconds (an expression gives a unit:
/// `50ms`, `2s`), counts are whole numbers. A figure without samples (a lateness percentile with no polls, a
/// login rate with no finished code) has no value, and a threshold on it fails: a soak that measured nothing
/// has not passed.
package enum ThresholdMetric: String, Sendable, CaseIterable {
    /// Finished codes that ended in a login: `authenticated / (authenticated + expired + denied)`; codes still polled
    /// at the end, and codes a cancel or a newer code ended, are not counted. (Adobe codes are never denied.)
    case loginSuccessRate = "login_success_rate"
    /// Logins (codes answered `authenticated`).
    case logins
    /// Devices that never got a code.
    case onboardingFailures = "onboarding_failures"
    /// Requests (polls included) answered 429, over all requests.
    case http429Rate = "http_429_rate"
    /// Requests (polls included) answered 5xx, over all requests.
    case http5xxRate = "http_5xx_rate"
    /// Requests (polls included) whose outcome was an error (429s, 5xx, transport, 4xx), over all requests.
    case errorRate = "error_rate"
    /// Polls sent.
    case polls
    /// Windows in which the emulator fell behind its own poll schedule (``SoakReport/generatorWindows``).
    case generatorBehindWindows = "generator_behind_windows"
    /// How late polls were sent against their plan (`sent − planned`).
    case pollLatenessP50 = "poll_lateness_p50"
    case pollLatenessP95 = "poll_lateness_p95"
    case pollLatenessP99 = "poll_lateness_p99"
    case pollLatenessMax = "poll_lateness_max"
    /// How long polls took to be answered.
    case pollLatencyP50 = "poll_latency_p50"
    case pollLatencyP95 = "poll_latency_p95"
    case pollLatencyP99 = "poll_latency_p99"
    case pollLatencyMax = "poll_latency_max"
    /// Time to login: from a code's first poll to the poll answered `authenticated`, over the codes that ended in a
    /// login (``PollFigures/timeToAuthenticate``).
    case timeToLoginP50 = "time_to_login_p50"
    case timeToLoginP95 = "time_to_login_p95"
    /// Polls a login took: each authenticated code's polls up to its `authenticated` answer
    /// (``PollFigures/pollsPerLogin``), 95th percentile.
    case pollsPerLoginP95 = "polls_per_login_p95"
    /// Polls answered `slow-down` (OAuth device grant): the server asked the device to poll less often.
    case slowDownAnswers = "slow_down_answers"
    /// Polls sent before their planned time, earlier than the protocol allows (never for Adobe devices).
    case earlyPolls = "early_polls"
    /// Early polls of a code already answered `slow-down`: a client that did not slow down when told to.
    case earlyPollsAfterSlowDown = "early_polls_after_slow_down"
    /// Codes that expired: an `expired` answer, a `REG410` event, or a last poll that scheduled none without a login.
    case expiredCodes = "expired_codes"
    /// Codes whose polling ended `denied` (OAuth `access_denied`).
    case deniedCodes = "denied_codes"

    /// How the metric's value reads and is written.
    package enum Kind: Sendable {
        case rate, milliseconds, count
    }

    package var kind: Kind {
        switch self {
        case .loginSuccessRate, .http429Rate, .http5xxRate, .errorRate: .rate
        case .logins, .onboardingFailures, .polls, .generatorBehindWindows, .pollsPerLoginP95, .slowDownAnswers, .earlyPolls,
            .earlyPollsAfterSlowDown, .expiredCodes, .deniedCodes:
            .count
        case .pollLatenessP50, .pollLatenessP95, .pollLatenessP99, .pollLatenessMax,
            .pollLatencyP50, .pollLatencyP95, .pollLatencyP99, .pollLatencyMax, .timeToLoginP50, .timeToLoginP95:
            .milliseconds
        }
    }

    /// The metric's value over `figures` (polls) and `trouble` (requests and devices), or `nil` without samples.
    func value(figures: PollFigures, trouble: TroubleFigures, generatorWindows: [GeneratorWindow]) -> Double? {
        let requests = trouble.stages.reduce(0) { $0 + $1.requests }
        func share(_ part: Int) -> Double? { requests == 0 ? nil : Double(part) / Double(requests) }
        switch self {
        case .loginSuccessRate:
            let finished = figures.authenticatedCodes + figures.expiredCodes + figures.deniedCodes
            return finished == 0 ? nil : Double(figures.authenticatedCodes) / Double(finished)
        case .logins: return Double(figures.authenticatedCodes)
        case .onboardingFailures: return Double(trouble.neverGotCode.count)
        case .http429Rate: return share(trouble.throttled)
        case .http5xxRate: return share(trouble.serverErrors)
        case .errorRate: return share(trouble.failed)
        case .polls: return Double(figures.polls)
        case .generatorBehindWindows: return Double(generatorWindows.count)
        case .pollLatenessP50: return figures.lateness.p50
        case .pollLatenessP95: return figures.lateness.p95
        case .pollLatenessP99: return figures.lateness.p99
        case .pollLatenessMax: return figures.lateness.max
        case .pollLatencyP50: return figures.latency.p50
        case .pollLatencyP95: return figures.latency.p95
        case .pollLatencyP99: return figures.latency.p99
        case .pollLatencyMax: return figures.latency.max
        case .timeToLoginP50: return figures.timeToAuthenticate.p50
        case .timeToLoginP95: return figures.timeToAuthenticate.p95
        case .pollsPerLoginP95: return figures.pollsPerLogin.p95
        case .slowDownAnswers: return Double(figures.slowDownAnswers)
        case .earlyPolls: return Double(figures.earlyPolls)
        case .earlyPollsAfterSlowDown: return Double(figures.earlyPollsAfterSlowDown)
        case .expiredCodes: return Double(figures.expiredCodes)
        case .deniedCodes: return Double(figures.deniedCodes)
        }
    }
}
