import RegcodeRecords

/// The request log's figures of one stage (registration, token, configuration, …).
package struct StageFigures: Sendable, Equatable {
    package var stage: RequestStage
    /// Logged requests, each retry counted.
    package var requests: Int = 0
    /// Outcome `ok`.
    package var ok: Int = 0
    /// Outcome `throttled` (HTTP 429).
    package var throttled: Int = 0
    /// Outcome `server-error` (HTTP 5xx).
    package var serverErrors: Int = 0
    /// Outcome `transport-error` (no HTTP answer).
    package var transportErrors: Int = 0
    /// Outcomes `client-error` and `unauthorized` (HTTP 4xx other than 429).
    package var clientErrors: Int = 0
    /// Every other outcome: `malformed`, `abandoned`, and outcomes this build does not know.
    package var other: Int = 0
    /// Requests after which the same request was tried again (a retry delay was chosen).
    package var retried: Int = 0
    /// Requests per outcome; every kind the report knows is present, zero or not.
    package var outcomes: [RequestOutcome: Int] = [:]
    package var latency: Distribution = .empty

    package init(stage: RequestStage) {
        self.stage = stage
    }
}

/// The request log's figures of one device or of the fleet.
package struct RequestFigures: Sendable, Equatable {
    /// Logged requests other than polls.
    package var requests: Int = 0
    /// Requests after which the same request was tried again.
    package var retried: Int = 0
    /// One entry per stage: every known stage in ``SoakReport/stageKinds`` order, then others
    /// alphabetically.
    package var stages: [StageFigures] = []

    package init() {}

    /// The figures of `stage`, if it is listed.
    package func stage(_ stage: RequestStage) -> StageFigures? {
        stages.first { $0.stage == stage }
    }
}

/// How devices got (or did not get) their codes. For a device the counts are its own (0 or 1 for
/// the device counts); for the fleet they are sums.
package struct OnboardingFigures: Sendable, Equatable {
    /// Devices that got at least one code: polled one, were shown one (`REGCODE`), were answered
    /// `ok` on a `session` request, or have codes in the state database.
    package var devicesWithCode: Int = 0
    /// Devices that never got a code.
    package var failedOnboardings: Int = 0
    /// `registration` requests answered `ok`.
    package var registrations: Int = 0
    /// `ok` registrations beyond each device's first: the device registered again.
    package var reRegistrations: Int = 0
    /// `REGCODE` status events (codes shown); `nil` when the event log was not read.
    package var codesIssued: Int?
    /// `REGCODE` events beyond each device's first; `nil` when the event log was not read.
    package var newCodes: Int?

    package init() {}

    mutating func merge(_ other: OnboardingFigures) {
        devicesWithCode += other.devicesWithCode
        failedOnboardings += other.failedOnboardings
        registrations += other.registrations
        reRegistrations += other.reRegistrations
        if let theirs = other.codesIssued { codesIssued = (codesIssued ?? 0) + theirs }
        if let theirs = other.newCodes { newCodes = (newCodes ?? 0) + theirs }
    }
}

/// A device that never got a code, with what the logs say about why.
package struct FailedOnboarding: Sendable, Equatable {
    package var device: String
    /// The stored state, when the device is still stored.
    package var state: String?
    /// The device's logged requests (any stage).
    package var requests: Int
    /// The device's failure `status` events (see ``StatusEventRecord/isFailure``).
    package var failureEvents: Int
    /// The latest failure `status` event, e.g. `R400`, `CFG429`, `REG500`.
    package var lastFailure: StatusEventRecord?
    /// The latest request that did not end `ok`.
    package var lastFailedRequest: RequestRecord?

    package init(
        device: String,
        state: String?,
        requests: Int,
        failureEvents: Int,
        lastFailure: StatusEventRecord?,
        lastFailedRequest: RequestRecord?
    ) {
        self.device = device
        self.state = state
        self.requests = requests
        self.failureEvents = failureEvents
        self.lastFailure = lastFailure
        self.lastFailedRequest = lastFailedRequest
    }
}

/// Collects the request log of one device (or of the fleet, by merging devices).
struct RequestAccumulator {
    var stageOrder: [RequestStage]
    var stages: [RequestStage: StageFigures] = [:]
    var latencies: [RequestStage: [Double]] = [:]
    let outcomeKinds: [RequestOutcome]

    init(stageKinds: [RequestStage], outcomeKinds: [RequestOutcome]) {
        stageOrder = stageKinds
        self.outcomeKinds = outcomeKinds
    }

    mutating func add(_ request: RequestRecord) {
        var figures = stages[request.stage] ?? emptyStage(request.stage)
        figures.requests += 1
        figures.count(request.outcome)
        if request.retryDelayMs != nil { figures.retried += 1 }
        stages[request.stage] = figures
        latencies[request.stage, default: []].append(request.latencyMs)
    }

    mutating func merge(_ other: RequestAccumulator) {
        for (stage, theirs) in other.stages {
            var figures = stages[stage] ?? emptyStage(stage)
            figures.requests += theirs.requests
            figures.ok += theirs.ok
            figures.throttled += theirs.throttled
            figures.serverErrors += theirs.serverErrors
            figures.transportErrors += theirs.transportErrors
            figures.clientErrors += theirs.clientErrors
            figures.other += theirs.other
            figures.retried += theirs.retried
            figures.outcomes.merge(theirs.outcomes, uniquingKeysWith: +)
            stages[stage] = figures
        }
        latencies.merge(other.latencies, uniquingKeysWith: +)
    }

    func finish() -> RequestFigures {
        let known = Set(stageOrder)
        let others = stages.keys.filter { !known.contains($0) }.sorted { $0.rawValue < $1.rawValue }
        var result = RequestFigures()
        for stage in stageOrder + others {
            var figures = stages[stage] ?? emptyStage(stage)
            figures.latency = Distribution(latencies[stage] ?? [])
            result.requests += figures.requests
            result.retried += figures.retried
            result.stages.append(figures)
        }
        return result
    }

    private func emptyStage(_ stage: RequestStage) -> StageFigures {
        var figures = StageFigures(stage: stage)
        figures.outcomes = Dictionary(outcomeKinds.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
        return figures
    }
}
