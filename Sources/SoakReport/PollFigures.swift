import RegcodeRecords

/// The soak figures of one device or of the whole fleet. Times and durations are milliseconds.
public struct PollFigures: Sendable, Equatable {
    /// Logged poll attempts.
    public var polls: Int = 0
    /// Distinct codes polled.
    public var codes: Int = 0
    /// Polls per code, over the codes (`count` is the number of codes).
    public var pollsPerCode: Distribution = .empty
    /// `sent[i] − sent[i−1]` for consecutive polls of the same code.
    public var achievedInterval: Distribution = .empty
    /// `next_delay_ms` of poll `i−1` for the same pairs, where it is present: the wait the engine
    /// chose, counted from the moment poll `i−1` was answered.
    public var plannedInterval: Distribution = .empty
    /// `sent_at − planned_at` of every poll; never negative in a healthy log, hence `min`.
    public var lateness: Distribution = .empty
    /// Request latency of every poll.
    public var latency: Distribution = .empty
    /// Polls answered with outcome `throttled` (HTTP 429).
    public var throttled: Int = 0
    /// Polls whose previous poll of the same code ended in an error outcome (see
    /// ``SoakReport/backoffOutcomes``) and chose a next wait: the engine waited a backoff delay
    /// before them. An error without a next wait is not followed by a backoff: either polling
    /// stopped, or (a first 401) the engine refreshed its token and re-sent the poll at once.
    public var backoffs: Int = 0
    /// Polls per outcome; every kind the report knows is present, zero or not.
    public var outcomes: [PollOutcome: Int] = [:]
    /// Polls per HTTP status.
    public var httpStatuses: [Int: Int] = [:]
    /// Polls without an HTTP status (transport errors).
    public var withoutHTTPStatus: Int = 0
    /// Codes per ``CodeFate``.
    public var authenticatedCodes: Int = 0
    public var expiredCodes: Int = 0
    public var endedCodes: Int = 0
    public var openCodes: Int = 0
    /// Per authenticated code: `sent_at` of the authenticated poll − `sent_at` of its first poll.
    public var timeToAuthenticate: Distribution = .empty
    /// Polls answered `code-invalid`.
    public var codeInvalid: Int = 0
    /// `status` events with `errorId` `REG410` / `REG500`; `nil` when the event log was not read.
    public var expiryEvents: Int?
    public var failureEvents: Int?
    /// `sent_at` of the first and last poll.
    public var firstSentMs: Int64?
    public var lastSentMs: Int64?

    public init() {}

    /// Codes that ended as `fate`.
    public func codes(_ fate: CodeFate) -> Int {
        switch fate {
        case .authenticated: authenticatedCodes
        case .expired: expiredCodes
        case .ended: endedCodes
        case .open: openCodes
        }
    }
}

/// The figures of one device.
public struct DeviceReport: Sendable, Equatable {
    public var device: String
    public var figures: PollFigures
    /// The stored state, when the device is stored and the devices were read.
    public var state: String?
    /// The request log's figures (empty when it was not read).
    public var requests: RequestFigures
    public var onboarding: OnboardingFigures
    /// Set when the device never got a code.
    public var failedOnboarding: FailedOnboarding?
    /// The device's fleet (``noFleetName`` when it has none or is no longer stored).
    public var fleet: String = noFleetName
    /// Whether it got a code, where it stopped, its 429s and 5xx over every stage.
    public var trouble = DeviceTrouble()

    public init(
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
public struct LatenessPoint: Sendable, Equatable {
    public var sentMs: Int64
    public var latenessMs: Int64

    public init(sentMs: Int64, latenessMs: Int64) {
        self.sentMs = sentMs
        self.latenessMs = latenessMs
    }
}

/// The fleet's raw series behind the charts.
public struct ReportSeries: Sendable, Equatable {
    /// Achieved intervals, ascending.
    public var achievedIntervals: [Double] = []
    /// Planned intervals, ascending.
    public var plannedIntervals: [Double] = []
    /// Every poll's lateness, in send order.
    public var lateness: [LatenessPoint] = []

    public init() {}
}
