/// How polling a code ended, as far as the poll log (and, when loaded, the event log) tells.
public enum CodeFate: String, Sendable, Equatable, CaseIterable {
    /// A poll of the code answered `authenticated`.
    case authenticated
    /// The code expired, became invalid or was given up: a `REG410` event names it, or its last
    /// poll chose no next poll (`next_delay_ms` null) without being `authenticated` or `abandoned`
    /// (this includes `code-invalid` answers and polls whose next wait would pass the expiry).
    case expired
    /// Polling stopped for another reason: the last answer came back `abandoned` (the loop had
    /// already stopped), or a later code of the same device started (cancel, replacement).
    case ended
    /// The last poll scheduled another one: still polling when the log ends.
    case open
}

/// One code of one device: the span of its polls and how it ended.
public struct CodeSummary: Sendable, Equatable {
    public var device: String
    public var code: String
    /// `sent_at` of the first and last logged poll, milliseconds since the Unix epoch.
    public var firstSentMs: Int64
    public var lastSentMs: Int64
    public var polls: Int
    public var fate: CodeFate

    public init(device: String, code: String, firstSentMs: Int64, lastSentMs: Int64, polls: Int, fate: CodeFate) {
        self.device = device
        self.code = code
        self.firstSentMs = firstSentMs
        self.lastSentMs = lastSentMs
        self.polls = polls
        self.fate = fate
    }
}

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
    public var outcomes: [String: Int] = [:]
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

/// A soak report: figures for the fleet and for each device, computed from the poll log and,
/// optionally, the `status` events, the request log and the stored devices.
public struct SoakReport: Sendable, Equatable {
    /// When the report was made, milliseconds since the Unix epoch.
    public var generatedAtMs: Int64
    /// The start of the window the logs were read from, if one was given.
    public var sinceMs: Int64?
    /// Whether `status` events were read (else the event figures are `nil`).
    public var eventsLoaded: Bool
    /// Whether the request log was read. Only then do the renderings show requests by stage,
    /// onboarding figures and failed onboardings.
    public var requestsLoaded: Bool
    public var fleet: PollFigures
    /// The fleet's request log figures.
    public var requests: RequestFigures
    /// The fleet's onboarding figures.
    public var onboarding: OnboardingFigures
    /// Every device the logs or the devices table name (got a code or not), in natural name order
    /// (`stb-2` before `stb-10`).
    public var devices: [DeviceReport]
    /// The devices that never got a code, in natural name order.
    public var failedOnboardings: [FailedOnboarding]
    /// Every code, by device (natural order), then by first poll.
    public var codes: [CodeSummary]
    public var series: ReportSeries
    /// Devices without a code, 429s and 5xx by stage (polls included), errors over time and the
    /// trouble windows, fleet-wide.
    public var trouble: Trouble
    /// Every figure per fleet (`devices.fleet`), in natural name order with ``noFleetName`` last.
    public var fleets: [FleetReport]
    /// Logins by kind (regular, TempPass, degraded, single sign-on); nil when the login log was not read
    /// (a database older than the log).
    public var logins: LoginFigures?

    /// Outcomes after which the engine waits a backoff delay rather than the interval.
    ///
    /// `client-error` belongs here too: the engine counts it as a consecutive error like a 5xx.
    public static let backoffOutcomes: Set<String> = ["server-error", "transport-error", "malformed", "unauthorized", "client-error"]

    /// The engine's request stages other than polling, in the order reports list them.
    public static let stageKinds = ["registration", "token", "configuration", "session", "profile", "decision", "metadata", "logout"]

    /// The engine's request outcomes, in the order reports list them.
    public static let requestOutcomeKinds = [
        "ok", "throttled", "server-error", "transport-error", "malformed", "unauthorized", "client-error", "abandoned",
    ]

    /// The engine's poll outcomes, in the order reports list them.
    public static let outcomeKinds = [
        "pending", "authenticated", "throttled", "server-error", "transport-error",
        "malformed", "unauthorized", "code-invalid", "client-error", "abandoned",
    ]

    /// Computes the report.
    /// - Parameters:
    ///   - polls: poll attempts, in any order; polls of one code are taken in `sent_at` order
    ///     (ties keep the given order).
    ///   - statusEvents: `status` events of the same window, or `nil` if the event log was not read.
    ///   - requests: requests other than polls of the same window, in any order, or `nil` if the
    ///     request log was not read.
    ///   - devices: the stored devices, or `nil` if they were not read.
    ///   - logins: logins of the same window, or `nil` if the login log was not read.
    ///   - generatedAtMs: the time to stamp the report with.
    ///   - sinceMs: the window start the logs were read from, if any.
    ///   - outcomeKinds: poll outcomes always listed (with zero counts); others that occur are added.
    ///   - stageKinds: request stages always listed; others that occur are added.
    ///   - requestOutcomeKinds: request outcomes always listed; others that occur are added.
    public init(
        polls: [PollRecord],
        statusEvents: [StatusEventRecord]?,
        requests: [RequestRecord]? = nil,
        devices deviceRecords: [DeviceRecord]? = nil,
        logins: [LoginRecord]? = nil,
        generatedAtMs: Int64,
        sinceMs: Int64? = nil,
        outcomeKinds: [String] = SoakReport.outcomeKinds,
        stageKinds: [String] = SoakReport.stageKinds,
        requestOutcomeKinds: [String] = SoakReport.requestOutcomeKinds
    ) {
        self.generatedAtMs = generatedAtMs
        self.sinceMs = sinceMs
        eventsLoaded = statusEvents != nil
        requestsLoaded = requests != nil
        self.logins = logins.map(LoginFigures.init)

        var pollsByDevice: [String: [Int]] = [:]
        for (index, poll) in polls.enumerated() { pollsByDevice[poll.device, default: []].append(index) }

        var expiryEvents: [String: Int] = [:]
        var failureEvents: [String: Int] = [:]
        var expiredByEvent: [String: Set<String>] = [:]
        var codesShown: [String: Int] = [:]
        var failures: [String: (count: Int, last: StatusEventRecord, at: (Int64, Int))] = [:]
        var eventDevices: Set<String> = []
        for (index, event) in (statusEvents ?? []).enumerated() {
            eventDevices.insert(event.device)
            if event.isFailure {
                let at = (event.timeMs, index)
                if let known = failures[event.device] {
                    let later = at > known.at
                    failures[event.device] = (known.count + 1, later ? event : known.last, later ? at : known.at)
                } else {
                    failures[event.device] = (1, event, at)
                }
            }
            switch event.errorId {
            case StatusEventRecord.expired:
                expiryEvents[event.device, default: 0] += 1
                if let code = event.code { expiredByEvent[event.device, default: []].insert(code) }
            case StatusEventRecord.failed:
                failureEvents[event.device, default: 0] += 1
            case StatusEventRecord.registrationCode:
                codesShown[event.device, default: 0] += 1
            default:
                continue
            }
        }

        let allRequests = requests ?? []
        var requestsByDevice: [String: [Int]] = [:]
        for (index, request) in allRequests.enumerated() { requestsByDevice[request.device, default: []].append(index) }
        var records: [String: DeviceRecord] = [:]
        for record in deviceRecords ?? [] { records[record.device] = record }

        let names = Set(pollsByDevice.keys).union(eventDevices).union(requestsByDevice.keys).union(records.keys)
            .sorted(by: NaturalOrder.less)
        var fleet = FigureAccumulator(outcomeKinds: outcomeKinds)
        var fleetRequests = RequestAccumulator(stageKinds: stageKinds, outcomeKinds: requestOutcomeKinds)
        var onboarding = OnboardingFigures()
        if statusEvents != nil {
            onboarding.codesIssued = 0
            onboarding.newCodes = 0
        }
        var devices: [DeviceReport] = []
        var fleetOf: [String: String] = [:]
        var fleetAccumulators: [String: FigureAccumulator] = [:]
        var fleetRequestAccumulators: [String: RequestAccumulator] = [:]
        var codes: [CodeSummary] = []
        var failedOnboardings: [FailedOnboarding] = []
        for name in names {
            var device = FigureAccumulator(outcomeKinds: outcomeKinds)
            let indices = (pollsByDevice[name] ?? []).sorted { (polls[$0].sentMs, $0) < (polls[$1].sentMs, $1) }
            var codeOrder: [String] = []
            var pollsByCode: [String: [PollRecord]] = [:]
            for index in indices {
                let poll = polls[index]
                if pollsByCode[poll.code] == nil { codeOrder.append(poll.code) }
                pollsByCode[poll.code, default: []].append(poll)
            }
            for (position, code) in codeOrder.enumerated() {
                let summary = device.addCode(
                    pollsByCode[code] ?? [],
                    isLatestOfDevice: position == codeOrder.count - 1,
                    expiredByEvent: expiredByEvent[name]?.contains(code) ?? false
                )
                codes.append(summary)
            }
            var figures = device.finish()
            if statusEvents != nil {
                figures.expiryEvents = expiryEvents[name] ?? 0
                figures.failureEvents = failureEvents[name] ?? 0
            }

            // Requests in send order (ties keep the given order).
            let deviceRequests = (requestsByDevice[name] ?? [])
                .sorted { (allRequests[$0].sentMs, $0) < (allRequests[$1].sentMs, $1) }
                .map { allRequests[$0] }
            var requestFigures = RequestAccumulator(stageKinds: stageKinds, outcomeKinds: requestOutcomeKinds)
            for request in deviceRequests { requestFigures.add(request) }

            var deviceOnboarding = OnboardingFigures()
            deviceOnboarding.registrations = deviceRequests.filter { $0.stage == "registration" && $0.outcome == "ok" }.count
            deviceOnboarding.reRegistrations = max(deviceOnboarding.registrations - 1, 0)
            if statusEvents != nil {
                let shown = codesShown[name] ?? 0
                deviceOnboarding.codesIssued = shown
                deviceOnboarding.newCodes = max(shown - 1, 0)
            }
            let record = records[name]
            let gotCode =
                !indices.isEmpty || (codesShown[name] ?? 0) > 0 || (record?.codesIssued ?? 0) > 0
                || deviceRequests.contains { $0.stage == "session" && $0.outcome == "ok" }
            var failed: FailedOnboarding?
            if gotCode {
                deviceOnboarding.devicesWithCode = 1
            } else {
                deviceOnboarding.failedOnboardings = 1
                let failure = FailedOnboarding(
                    device: name,
                    state: record?.state,
                    requests: deviceRequests.count,
                    failureEvents: failures[name]?.count ?? 0,
                    lastFailure: failures[name]?.last,
                    lastFailedRequest: deviceRequests.last { $0.outcome != "ok" }
                )
                failed = failure
                failedOnboardings.append(failure)
            }
            onboarding.merge(deviceOnboarding)

            var report = DeviceReport(
                device: name,
                figures: figures,
                state: record?.state,
                requests: requestFigures.finish(),
                onboarding: deviceOnboarding,
                failedOnboarding: failed
            )
            let fleetName = record?.fleet ?? noFleetName
            report.fleet = fleetName
            fleetOf[name] = fleetName
            devices.append(report)
            fleet.merge(device)
            fleetRequests.merge(requestFigures)
            fleetAccumulators[fleetName, default: FigureAccumulator(outcomeKinds: outcomeKinds)].merge(device)
            fleetRequestAccumulators[fleetName, default: RequestAccumulator(stageKinds: stageKinds, outcomeKinds: requestOutcomeKinds)]
                .merge(requestFigures)
        }
        self.requests = fleetRequests.finish()
        self.onboarding = onboarding
        self.failedOnboardings = failedOnboardings

        var fleetFigures = fleet.finish()
        if statusEvents != nil {
            fleetFigures.expiryEvents = expiryEvents.values.reduce(0, +)
            fleetFigures.failureEvents = failureEvents.values.reduce(0, +)
        }
        self.fleet = fleetFigures
        let (trouble, troubleByFleet) = Self.computeTrouble(
            polls: polls,
            requests: allRequests,
            devices: &devices,
            fleetOf: fleetOf,
            stageKinds: stageKinds
        )
        self.trouble = trouble
        self.devices = devices
        self.codes = codes

        var series = ReportSeries()
        series.achievedIntervals = fleet.achieved
        series.plannedIntervals = fleet.planned
        series.lateness = polls.map { LatenessPoint(sentMs: $0.sentMs, latenessMs: $0.sentMs - $0.plannedMs) }
        // The store returns polls in send order already; only sort (stably) when they are not.
        if !zip(series.lateness, series.lateness.dropFirst()).allSatisfy({ $0.sentMs <= $1.sentMs }) {
            series.lateness = series.lateness.enumerated()
                .sorted { ($0.element.sentMs, $0.offset) < ($1.element.sentMs, $1.offset) }
                .map(\.element)
        }
        self.series = series

        let fleetNames = Set(fleetOf.values).sorted { a, b in
            (a == noFleetName) != (b == noFleetName) ? b == noFleetName : NaturalOrder.less(a, b)
        }
        fleets = fleetNames.map { name in
            var accumulator = fleetAccumulators[name] ?? FigureAccumulator(outcomeKinds: outcomeKinds)
            var figures = accumulator.finish()
            if statusEvents != nil {
                let members = devices.filter { $0.fleet == name }
                figures.expiryEvents = members.reduce(0) { $0 + ($1.figures.expiryEvents ?? 0) }
                figures.failureEvents = members.reduce(0) { $0 + ($1.figures.failureEvents ?? 0) }
            }
            var fleetSeries = ReportSeries()
            fleetSeries.achievedIntervals = accumulator.achieved
            fleetSeries.plannedIntervals = accumulator.planned
            fleetSeries.lateness = series.lateness.isEmpty ? [] : Self.lateness(of: polls, in: name, fleetOf: fleetOf)
            return FleetReport(
                fleet: name,
                figures: figures,
                requests: (fleetRequestAccumulators[name] ?? RequestAccumulator(stageKinds: stageKinds, outcomeKinds: requestOutcomeKinds))
                    .finish(),
                trouble: troubleByFleet[name] ?? TroubleFigures(),
                series: fleetSeries
            )
        }
    }

    /// The lateness points of one fleet's polls, in send order.
    static func lateness(of polls: [PollRecord], in fleet: String, fleetOf: [String: String]) -> [LatenessPoint] {
        polls.enumerated().filter { (fleetOf[$0.element.device] ?? noFleetName) == fleet }
            .sorted { ($0.element.sentMs, $0.offset) < ($1.element.sentMs, $1.offset) }
            .map { LatenessPoint(sentMs: $0.element.sentMs, latenessMs: $0.element.sentMs - $0.element.plannedMs) }
    }
}

/// Collects the raw values of one device (or of the fleet, by merging devices).
struct FigureAccumulator {
    var polls = 0
    var pollsPerCode: [Double] = []
    var achieved: [Double] = []
    var planned: [Double] = []
    var lateness: [Double] = []
    var latency: [Double] = []
    var timeToAuthenticate: [Double] = []
    var throttled = 0
    var backoffs = 0
    var outcomes: [String: Int]
    var httpStatuses: [Int: Int] = [:]
    var withoutHTTPStatus = 0
    var fates: [CodeFate: Int] = [:]
    var codeInvalid = 0
    var firstSentMs: Int64?
    var lastSentMs: Int64?

    init(outcomeKinds: [String]) {
        outcomes = Dictionary(outcomeKinds.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Adds the polls of one code, in send order, and says how the code ended.
    mutating func addCode(_ codePolls: [PollRecord], isLatestOfDevice: Bool, expiredByEvent: Bool) -> CodeSummary {
        guard let first = codePolls.first, let last = codePolls.last else {
            preconditionFailure("a code has at least one poll")
        }
        var authenticatedAt: Int64?
        for (index, poll) in codePolls.enumerated() {
            polls += 1
            lateness.append(Double(poll.sentMs - poll.plannedMs))
            latency.append(poll.latencyMs)
            outcomes[poll.outcome, default: 0] += 1
            if let status = poll.httpStatus {
                httpStatuses[status, default: 0] += 1
            } else {
                withoutHTTPStatus += 1
            }
            if poll.outcome == "throttled" { throttled += 1 }
            if poll.outcome == "code-invalid" { codeInvalid += 1 }
            if poll.outcome == "authenticated", authenticatedAt == nil { authenticatedAt = poll.sentMs }
            firstSentMs = min(firstSentMs ?? poll.sentMs, poll.sentMs)
            lastSentMs = max(lastSentMs ?? poll.sentMs, poll.sentMs)
            guard index > 0 else { continue }
            let previous = codePolls[index - 1]
            achieved.append(Double(poll.sentMs - previous.sentMs))
            if let wait = previous.nextDelayMs { planned.append(Double(wait)) }
            if previous.nextDelayMs != nil, SoakReport.backoffOutcomes.contains(previous.outcome) { backoffs += 1 }
        }
        pollsPerCode.append(Double(codePolls.count))

        let fate: CodeFate
        if let authenticatedAt {
            fate = .authenticated
            timeToAuthenticate.append(Double(authenticatedAt - first.sentMs))
        } else if expiredByEvent || (last.nextDelayMs == nil && last.outcome != "abandoned") {
            fate = .expired
        } else if last.outcome == "abandoned" || !isLatestOfDevice {
            fate = .ended
        } else {
            fate = .open
        }
        fates[fate, default: 0] += 1
        return CodeSummary(
            device: first.device,
            code: first.code,
            firstSentMs: first.sentMs,
            lastSentMs: last.sentMs,
            polls: codePolls.count,
            fate: fate
        )
    }

    mutating func merge(_ other: FigureAccumulator) {
        polls += other.polls
        pollsPerCode += other.pollsPerCode
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
        if let first = other.firstSentMs { firstSentMs = min(firstSentMs ?? first, first) }
        if let last = other.lastSentMs { lastSentMs = max(lastSentMs ?? last, last) }
    }

    /// Sorts the collected values in place (the fleet's sorted intervals feed the charts) and
    /// summarises them.
    mutating func finish() -> PollFigures {
        pollsPerCode.sort()
        achieved.sort()
        planned.sort()
        lateness.sort()
        latency.sort()
        timeToAuthenticate.sort()
        var figures = PollFigures()
        figures.polls = polls
        figures.codes = pollsPerCode.count
        figures.pollsPerCode = Distribution(sorted: pollsPerCode)
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
        figures.endedCodes = fates[.ended] ?? 0
        figures.openCodes = fates[.open] ?? 0
        figures.timeToAuthenticate = Distribution(sorted: timeToAuthenticate)
        figures.codeInvalid = codeInvalid
        figures.firstSentMs = firstSentMs
        figures.lastSentMs = lastSentMs
        return figures
    }
}

/// Orders names the way people count: digit runs compare by value, so `stb-2` < `stb-10`.
public enum NaturalOrder {
    /// Whether `a` sorts before `b`; equal-valued digit runs fall back to plain string order.
    public static func less(_ a: String, _ b: String) -> Bool {
        let left = Array(a.unicodeScalars)
        let right = Array(b.unicodeScalars)
        var i = 0
        var j = 0
        while i < left.count, j < right.count {
            if isDigit(left[i]), isDigit(right[j]) {
                let startI = i
                let startJ = j
                while i < left.count, isDigit(left[i]) { i += 1 }
                while j < right.count, isDigit(right[j]) { j += 1 }
                let numberA = String(String.UnicodeScalarView(left[startI..<i]))
                let numberB = String(String.UnicodeScalarView(right[startJ..<j]))
                // Compare by magnitude without parsing, so runs longer than Int64 still work.
                let trimmedA = numberA.drop { $0 == "0" }
                let trimmedB = numberB.drop { $0 == "0" }
                if trimmedA.count != trimmedB.count { return trimmedA.count < trimmedB.count }
                if trimmedA != trimmedB { return trimmedA < trimmedB }
            } else {
                if left[i] != right[j] { return left[i].value < right[j].value }
                i += 1
                j += 1
            }
        }
        if (left.count - i) != (right.count - j) { return (left.count - i) < (right.count - j) }
        return a < b
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }
}
