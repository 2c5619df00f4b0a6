import RegcodeRecords

/// The soak figures of one device or of the whole fleet. Times and durations are milliseconds.
package struct PollFigures: Sendable, Equatable {
    /// Logged poll attempts.
    package var polls: Int = 0
    /// Distinct codes polled.
    package var codes: Int = 0
    /// Polls per code, over the codes (`count` is the number of codes).
    package var pollsPerCode: Distribution = .empty
    /// `sent[i] − sent[i−1]` for consecutive polls of the same code.
    package var achievedInterval: Distribution = .empty
    /// `next_delay_ms` of poll `i−1` for the same pairs, where it is present: the wait the engine
    /// chose, counted from the moment poll `i−1` was answered.
    package var plannedInterval: Distribution = .empty
    /// `sent_at − planned_at` of every poll; never negative in a healthy log, hence `min`.
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
    /// Codes per ``CodeFate``.
    package var authenticatedCodes: Int = 0
    package var expiredCodes: Int = 0
    package var endedCodes: Int = 0
    package var openCodes: Int = 0
    /// Per authenticated code: `sent_at` of the authenticated poll − `sent_at` of its first poll.
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

    /// Codes that ended as `fate`.
    package func codes(_ fate: CodeFate) -> Int {
        switch fate {
        case .authenticated: authenticatedCodes
        case .expired: expiredCodes
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
