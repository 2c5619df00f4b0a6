import RegcodeRecords

/// Collects the raw values of one device (or of the fleet, by merging devices).
struct FigureAccumulator {
    var polls = 0
    var pollsPerCode: [Double] = []
    var pollsPerLogin: [Double] = []
    var achieved: [Double] = []
    var planned: [Double] = []
    var lateness: [Double] = []
    var latency: [Double] = []
    var timeToAuthenticate: [Double] = []
    var throttled = 0
    var backoffs = 0
    var outcomes: [PollOutcome: Int]
    var httpStatuses: [Int: Int] = [:]
    var withoutHTTPStatus = 0
    var fates: [CodeFate: Int] = [:]
    var codeInvalid = 0
    var slowDownAnswers = 0
    var earlyPolls = 0
    var earlyPollsAfterSlowDown = 0
    var firstSentMs: Int64?
    var lastSentMs: Int64?

    init(outcomeKinds: [PollOutcome]) {
        outcomes = Dictionary(outcomeKinds.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Adds the polls of one code, in send order, and says how the code ended.
    mutating func addCode(_ codePolls: [PollRecord], isLatestOfDevice: Bool, expiredByEvent: Bool) -> CodeSummary {
        guard let first = codePolls.first, let last = codePolls.last else {
            preconditionFailure("a code has at least one poll")
        }
        var authenticatedAt: Int64?
        var pollsToLogin = 0
        // Whether an earlier poll of this code (in send order) was answered `slow-down`.
        var slowedDown = false
        for (index, poll) in codePolls.enumerated() {
            polls += 1
            // Kept negative for an early poll (see ``PollFigures/lateness``).
            lateness.append(Double(poll.sentEpochMs - poll.plannedEpochMs))
            if poll.sentEpochMs < poll.plannedEpochMs {
                earlyPolls += 1
                if slowedDown { earlyPollsAfterSlowDown += 1 }
            }
            if poll.outcome == .slowDown {
                slowDownAnswers += 1
                slowedDown = true
            }
            latency.append(poll.latencyMs)
            outcomes[poll.outcome, default: 0] += 1
            if let status = poll.httpStatus {
                httpStatuses[status, default: 0] += 1
            } else {
                withoutHTTPStatus += 1
            }
            if poll.outcome == .throttled { throttled += 1 }
            if poll.outcome == .codeInvalid { codeInvalid += 1 }
            if poll.outcome == .authenticated, authenticatedAt == nil {
                authenticatedAt = poll.sentEpochMs
                pollsToLogin = index + 1
            }
            firstSentMs = min(firstSentMs ?? poll.sentEpochMs, poll.sentEpochMs)
            lastSentMs = max(lastSentMs ?? poll.sentEpochMs, poll.sentEpochMs)
            guard index > 0 else { continue }
            let previous = codePolls[index - 1]
            achieved.append(Double(poll.sentEpochMs - previous.sentEpochMs))
            if let wait = previous.nextDelayMs { planned.append(Double(wait)) }
            if previous.nextDelayMs != nil, SoakReport.backoffOutcomes.contains(previous.outcome) { backoffs += 1 }
        }
        pollsPerCode.append(Double(codePolls.count))

        // `denied` and `expired` end the code (no next poll); an answer that arrived after the loop had stopped may
        // still follow them as `abandoned`, so the first of them decides, not the last poll.
        let endingAnswer = codePolls.first { $0.outcome == .denied || $0.outcome == .expired }?.outcome
        let fate: CodeFate
        if let authenticatedAt {
            fate = .authenticated
            timeToAuthenticate.append(Double(authenticatedAt - first.sentEpochMs))
            pollsPerLogin.append(Double(pollsToLogin))
        } else if endingAnswer == .denied {
            fate = .denied
        } else if endingAnswer == .expired || expiredByEvent || (last.nextDelayMs == nil && !last.outcome.isClientSide) {
            fate = .expired
        } else if last.outcome.isClientSide || !isLatestOfDevice {
            fate = .ended
        } else {
            fate = .open
        }
        fates[fate, default: 0] += 1
        return CodeSummary(
            device: first.device,
            code: first.code,
            firstSentMs: first.sentEpochMs,
            lastSentMs: last.sentEpochMs,
            polls: codePolls.count,
            fate: fate
        )
    }

    mutating func merge(_ other: FigureAccumulator) {
        polls += other.polls
        pollsPerCode += other.pollsPerCode
        pollsPerLogin += other.pollsPerLogin
        achieved += other.achieved
        planned += other.planned
        lateness += other.lateness
        latency += other.latency
        timeToAuthenticate += other.timeToAuthenticate
        throttled += other.throttled
        backoffs += other.backoffs
        outcomes.merge(other.outcomes, uniquingKeysWith: +)
        httpStatuses.merge(other.httpStatuses, uniquingKeysWith: +)
        withoutHTTPStatus += other.withoutHTTPStatus
        fates.merge(other.fates, uniquingKeysWith: +)
        codeInvalid += other.codeInvalid
        slowDownAnswers += other.slowDownAnswers
        earlyPolls += other.earlyPolls
        earlyPollsAfterSlowDown += other.earlyPollsAfterSlowDown
        if let first = other.firstSentMs { firstSentMs = min(firstSentMs ?? first, first) }
        if let last = other.lastSentMs { lastSentMs = max(lastSentMs ?? last, last) }
    }

    /// Sorts the collected values in place (the fleet's sorted intervals feed the charts) and
    /// summarises them.
    mutating func finish() -> PollFigures {
        pollsPerCode.sort()
        pollsPerLogin.sort()
        achieved.sort()
        planned.sort()
        lateness.sort()
        latency.sort()
        timeToAuthenticate.sort()
        var figures = PollFigures()
        figures.polls = polls
        figures.codes = pollsPerCode.count
        figures.pollsPerCode = Distribution(sorted: pollsPerCode)
        figures.pollsPerLogin = Distribution(sorted: pollsPerLogin)
        figures.achievedInterval = Distribution(sorted: achieved)
        figures.plannedInterval = Distribution(sorted: planned)
        figures.lateness = Distribution(sorted: lateness)
        figures.latency = Distribution(sorted: latency)
        figures.throttled = throttled
        figures.backoffs = backoffs
        figures.outcomes = outcomes
        figures.httpStatuses = httpStatuses
        figures.withoutHTTPStatus = withoutHTTPStatus
        figures.authenticatedCodes = fates[.authenticated] ?? 0
        figures.expiredCodes = fates[.expired] ?? 0
        figures.deniedCodes = fates[.denied] ?? 0
        figures.endedCodes = fates[.ended] ?? 0
        figures.openCodes = fates[.open] ?? 0
        figures.timeToAuthenticate = Distribution(sorted: timeToAuthenticate)
        figures.codeInvalid = codeInvalid
        figures.slowDownAnswers = slowDownAnswers
        figures.earlyPolls = earlyPolls
        figures.earlyPollsAfterSlowDown = earlyPollsAfterSlowDown
        figures.firstSentMs = firstSentMs
        figures.lastSentMs = lastSentMs
        return figures
    }
}
