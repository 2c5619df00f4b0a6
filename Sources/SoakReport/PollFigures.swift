import RegcodeRecords

/// The soak figures of one device or of the whole fleet. Times and durations are milliseconds.
package struct PollFigures: Sendable, Equatable {
    /// Logged poll attempts.
    package var polls: Int = 0
    /// Distinct codes polled.
    package var codes: Int = 0
    /// Polls per code, over the codes (`count` is the number of codes): every code, finished or not.
    package var pollsPerCode: Distribution = .empty
    /// Polls per login, over the codes that ended ``CodeFate/authenticated`` (`count` is the number of logins): each
    /// code's polls up to and including its first `authenticated` answer. Unlike ``pollsPerCode`` it leaves out codes
    /// still polling, expired, denied or replaced, so it reads as "how many polls a login took".
    package var pollsPerLogin: Distribution = .empty
    /// `sent[i] − sent[i−1]` for consecutive polls of the same code.
    package var achievedInterval: Distribution = .empty
    /// `next_delay_ms` of poll `i−1` for the same pairs, where it is present: the wait the engine
    /// chose, counted from the moment poll `i−1` was answered.
    package var plannedInterval: Distribution = .empty
    /// `sent_at − planned_at` of every poll.
    ///
    /// Early polls (``earlyPolls``) are kept as the negative values they are, not clamped to 0: `planned_at` is the
    /// earliest moment the protocol allows the poll, so `min` shows how early the worst one went. Clamping would not
    /// move the upper percentiles (an early poll ranks below every on-time one either way) and would only hide that.
    /// An Adobe device never sends before `planned_at`, so for Adobe polls nothing here changes: every value is
    /// ≥ 0 and the lateness thresholds (`poll_lateness_p50` … `_max`) mean what they always did.
    package var lateness: Distribution = .empty
    /// Request latency of every poll.
    package var latency: Distribution = .empty
    /// Polls answered with outcome `throttled` (HTTP 429).
    package var throttled: Int = 0
    /// Polls whose previous poll of the same code ended in an error outcome (see
    /// ``SoakReport/backoffOutcomes``) and chose a next wait: the engine waited a backoff delay
    /// before them. An error without a next wait is not followed by a backoff: either polling
    /// stopped, or (a first 401) the engine refreshed its token and re-sent the poll at once.
    package var backoffs: Int = 0
    /// Polls per outcome; every kind the report knows is present, zero or not.
    package var outcomes: [PollOutcome: Int] = [:]
    /// Polls per HTTP status.
    package var httpStatuses: [Int: Int] = [:]
    /// Polls without an HTTP status (transport errors).
    package var withoutHTTPStatus: Int = 0
    /// Polls answered `slow-down` (OAuth device grant, RFC 8628 §3.5): the server asked for a longer interval. Not an
    /// error (not in ``SoakReport/errorPollOutcomes``) and not followed by a backoff: the next poll waits the longer
    /// interval, which its `planned_at` already holds.
    package var slowDownAnswers: Int = 0
    /// Polls sent before their planned time (`sent_at < planned_at`, negative lateness): earlier than the protocol
    /// allows. A well-behaved device never does; an OAuth device told to misbehave (`too-fast`, `ignore-slow-down`)
    /// does, and an Adobe device never does.
    package var earlyPolls: Int = 0
    /// Early polls of a code that had already been answered `slow-down` (an earlier poll of the same code, in send
    /// order): the client went on polling too fast after being told to slow down.
    package var earlyPollsAfterSlowDown: Int = 0
    /// Codes per ``CodeFate``.
    package var authenticatedCodes: Int = 0
    package var expiredCodes: Int = 0
    /// Codes whose polling ended `denied` (OAuth `access_denied`): ``CodeFate/denied``.
    package var deniedCodes: Int = 0
    package var endedCodes: Int = 0
    package var openCodes: Int = 0
    /// Per authenticated code: `sent_at` of the authenticated poll − `sent_at` of its first poll (the time to login of
    /// the `time_to_login_*` thresholds).
    package var timeToAuthenticate: Distribution = .empty
    /// Polls answered `code-invalid`.
    package var codeInvalid: Int = 0
    /// `status` events with `errorId` `REG410` / `REG500`; `nil` when the event log was not read.
    package var expiryEvents: Int?
    package var failureEvents: Int?
    /// `sent_at` of the first and last poll.
    package var firstSentMs: Int64?
    package var lastSentMs: Int64?

    package init() {}

    /// Whether any figure of the OAuth device grant is there: a `slow-down`, `denied` or `expired` answer, an early
    /// poll, a denied code. Never for Adobe polls; the text and HTML reports show their device flow rows only then.
    package var hasDeviceFlowFigures: Bool {
        slowDownAnswers > 0 || earlyPolls > 0 || earlyPollsAfterSlowDown > 0 || deniedCodes > 0
            || [PollOutcome.slowDown, .denied, .expired].contains { (outcomes[$0] ?? 0) > 0 }
    }

    /// Codes that ended as `fate`.
    package func codes(_ fate: CodeFate) -> Int {
        switch fate {
        case .authenticated: authenticatedCodes
        case .expired: expiredCodes
        case .denied: deniedCodes
        case .ended: endedCodes
        case .open: openCodes
        }
    }
}

/// The figures of one device.
package struct DeviceReport: Sendable, Equatable {
    package var device: String
    package var figures: PollFigures
    /// The stored state, when the device is stored and the devices were read.
    package var state: String?
    /// The request log's figures (empty when it was not read).
    package var requests: RequestFigures
    package var onboarding: OnboardingFigures
    /// Set when the device never got a code.
    package var failedOnboarding: FailedOnboarding?
    /// The device's fleet (``noFleetName`` when it has none or is no longer stored).
    package var fleet: String = noFleetName
    /// Whether it got a code, where it stopped, its 429s and 5xx over every stage.
    package var trouble = DeviceTrouble()

    package init(
        device: String,
        figures: PollFigures,
        state: String? = nil,
        requests: RequestFigures = RequestFigures(),
        onboarding: OnboardingFigures = OnboardingFigures(),
        failedOnboarding: FailedOnboarding? = nil
    ) {
        self.device = device
        self.figures = figures
        self.state = state
        self.requests = requests
        self.onboarding = onboarding
        self.failedOnboarding = failedOnboarding
    }
}

/// One poll's lateness at the time it was sent, for the lateness chart.
package struct LatenessPoint: Sendable, Equatable {
    package var sentMs: Int64
    package var latenessMs: Int64

    package init(sentMs: Int64, latenessMs: Int64) {
        self.sentMs = sentMs
        self.latenessMs = latenessMs
    }
}

/// The fleet's raw series behind the charts.
package struct ReportSeries: Sendable, Equatable {
    /// Achieved intervals, ascending.
    package var achievedIntervals: [Double] = []
    /// Planned intervals, ascending.
    package var plannedIntervals: [Double] = []
    /// Every poll's lateness, in send order.
    package var lateness: [LatenessPoint] = []

    package init() {}
}
