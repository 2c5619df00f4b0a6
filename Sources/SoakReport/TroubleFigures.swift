// What went wrong in a run: devices that never got a code, 429s and 5xx by stage (polls
// included), errors over time with the windows where the backend misbehaved, and every figure per
// fleet.

/// The fleet name reports use for devices whose `devices.fleet` is NULL (or that are no longer stored).
public let noFleetName = "(no fleet)"

/// Failures of one stage. Polls are the stage `poll`.
public struct StageTrouble: Sendable, Equatable {
    public var stage: String
    /// Logged requests (or polls), each retry counted.
    public var requests: Int = 0
    /// Requests whose outcome was an error (see ``SoakReport/errorOutcomes``).
    public var failed: Int = 0
    /// Answered 429.
    public var throttled: Int = 0
    /// Answered 5xx.
    public var serverErrors: Int = 0

    public init(stage: String) {
        self.stage = stage
    }
}

/// One device's trouble figures.
public struct DeviceTrouble: Sendable, Equatable {
    public var gotCode: Bool = true
    /// For a device without a code: the stage of its last logged request, `nil` when none was logged.
    public var stoppedAt: String?
    /// For a device without a code: its last request's HTTP status, else its outcome (`429`,
    /// `transport-error`), or `ok` when that request succeeded; the last failure event's id when no
    /// request was logged.
    public var stopStatus: String?
    /// The last request that did not end `ok` (any device), as `registration 429 throttled (error code)`.
    public var lastError: String?
    /// The same, shorter: `registration 429 (error code)`, the outcome only without a status.
    public var lastErrorShort: String?
    /// 429s and 5xx over polls and other requests.
    public var throttled: Int = 0
    public var serverErrors: Int = 0
    /// Error outcomes over polls and other requests (429s and 5xx included).
    public var errors: Int = 0

    public init() {}
}

/// How many devices without a code stopped at one stage with one status.
public struct StopGroup: Sendable, Equatable {
    /// The stage, or `nil`: no request was logged.
    public var stage: String?
    public var status: String?
    public var devices: [String]

    public init(stage: String?, status: String?, devices: [String]) {
        self.stage = stage
        self.status = status
        self.devices = devices
    }

    /// `registration (429)`, `session (503)`, `no logged request`.
    public var phrase: String {
        let place = stage ?? "no logged request"
        guard let status else { return place }
        return "\(place) (\(status))"
    }
}

/// Requests (polls included) of one time bucket.
public struct TimeBucket: Sendable, Equatable {
    public var startMs: Int64
    public var requests: Int = 0
    public var throttled: Int = 0
    public var serverErrors: Int = 0
    /// Errors other than 429 and 5xx (transport, malformed, 4xx).
    public var otherErrors: Int = 0

    public init(startMs: Int64) {
        self.startMs = startMs
    }

    public var errors: Int { throttled + serverErrors + otherErrors }
}

/// A run of time buckets where the backend misbehaved, found from the logs.
public struct TroubleWindow: Sendable, Equatable {
    /// `T1`, `T2`, … in time order.
    public var label: String
    public var startMs: Int64
    /// The end of its last bucket.
    public var endMs: Int64
    public var requests: Int
    public var throttled: Int
    public var serverErrors: Int
    public var otherErrors: Int
    /// The stage with most errors in the window.
    public var worstStage: String?
    /// Fleets with errors in the window, most errors first.
    public var fleets: [String]

    public init(
        label: String,
        startMs: Int64,
        endMs: Int64,
        requests: Int,
        throttled: Int,
        serverErrors: Int,
        otherErrors: Int,
        worstStage: String?,
        fleets: [String]
    ) {
        self.label = label
        self.startMs = startMs
        self.endMs = endMs
        self.requests = requests
        self.throttled = throttled
        self.serverErrors = serverErrors
        self.otherErrors = otherErrors
        self.worstStage = worstStage
        self.fleets = fleets
    }
}

/// The trouble figures of the fleet or of one configured fleet.
public struct TroubleFigures: Sendable, Equatable {
    public var devices: Int = 0
    public var devicesWithCode: Int = 0
    /// Devices that never got a code, in natural name order.
    public var neverGotCode: [String] = []
    /// The devices without a code grouped by where they stopped, largest group first.
    public var stops: [StopGroup] = []
    /// Every stage with requests, in ``SoakReport/stageKinds`` order, then `poll`, then others.
    public var stages: [StageTrouble] = []
    /// Errors over time; buckets of ``SoakReport/Trouble/bucketMs``, the same for every fleet.
    public var timeline: [TimeBucket] = []

    public init() {}

    public var throttled: Int { stages.reduce(0) { $0 + $1.throttled } }
    public var serverErrors: Int { stages.reduce(0) { $0 + $1.serverErrors } }
    public var failed: Int { stages.reduce(0) { $0 + $1.failed } }

    /// The figures of `stage`, if it saw requests.
    public func stage(_ name: String) -> StageTrouble? {
        stages.first { $0.stage == name }
    }
}

/// Every figure of one configured fleet (`devices.fleet`).
public struct FleetReport: Sendable, Equatable {
    public var fleet: String
    public var figures: PollFigures
    public var requests: RequestFigures
    public var trouble: TroubleFigures
    /// The fleet's own chart series (its intervals, its lateness).
    public var series: ReportSeries

    public init(fleet: String, figures: PollFigures, requests: RequestFigures, trouble: TroubleFigures, series: ReportSeries) {
        self.fleet = fleet
        self.figures = figures
        self.requests = requests
        self.trouble = trouble
        self.series = series
    }
}

extension SoakReport {
    /// Outcomes (of polls and other requests) counted as errors in the trouble figures; `abandoned`
    /// and `code-invalid` are the client's or the code's doing, not the backend's.
    public static let errorOutcomes: Set<String> = [
        "throttled", "server-error", "transport-error", "malformed", "unauthorized", "client-error",
    ]

    /// A bucket is trouble when at least this share of its requests failed…
    public static let troubleShare = 0.05
    /// …and at least this many: one stray error in a quiet second is not a window.
    public static let troubleMinimumErrors = 2

    /// The run's trouble: the fleet-wide figures, the bucket width and the windows.
    public struct Trouble: Sendable, Equatable {
        public var figures: TroubleFigures
        /// Width of the timeline buckets: a minute, or finer for runs shorter than two hours.
        public var bucketMs: Int64
        public var windows: [TroubleWindow]

        public init(figures: TroubleFigures, bucketMs: Int64, windows: [TroubleWindow]) {
            self.figures = figures
            self.bucketMs = bucketMs
            self.windows = windows
        }
    }

    /// The bucket width for a run of `spanMs`: a minute, or for a short run the smallest round
    /// step giving fewer than 240 buckets, so a burst of errors stays visible as its own bars.
    public static func bucketWidth(spanMs: Int64) -> Int64 {
        let steps: [Int64] = [1000, 2000, 5000, 10_000, 15_000, 30_000]
        return steps.first { spanMs / $0 < 240 } ?? 60_000
    }

    /// Runs of buckets where at least ``troubleShare`` of the requests, and at least
    /// ``troubleMinimumErrors`` requests, failed; joined across a single quiet bucket so one
    /// flapping fault reads as one window.
    public static func troubleWindows(
        timeline: [TimeBucket],
        bucketMs: Int64,
        stageErrors: (Int64, Int64) -> String?,
        fleetErrors: (Int64, Int64) -> [String]
    ) -> [TroubleWindow] {
        let bad = timeline.map { $0.errors >= troubleMinimumErrors && Double($0.errors) >= troubleShare * Double(max($0.requests, 1)) }
        var runs: [ClosedRange<Int>] = []
        for index in bad.indices where bad[index] {
            if let last = runs.last, index - last.upperBound <= 2 {
                runs[runs.count - 1] = last.lowerBound...index
            } else {
                runs.append(index...index)
            }
        }
        return runs.enumerated().map { number, run in
            let buckets = timeline[run]
            let start = timeline[run.lowerBound].startMs
            let end = timeline[run.upperBound].startMs + bucketMs
            return TroubleWindow(
                label: "T\(number + 1)",
                startMs: start,
                endMs: end,
                requests: buckets.reduce(0) { $0 + $1.requests },
                throttled: buckets.reduce(0) { $0 + $1.throttled },
                serverErrors: buckets.reduce(0) { $0 + $1.serverErrors },
                otherErrors: buckets.reduce(0) { $0 + $1.otherErrors },
                worstStage: stageErrors(start, end),
                fleets: fleetErrors(start, end)
            )
        }
    }

    /// The sentences that say what went wrong, most important first; one sentence when nothing did.
    public var headline: [String] {
        let t = trouble.figures
        var sentences: [String] = []
        if !t.neverGotCode.isEmpty {
            let stops = t.stops.map { "\($0.devices.count) stopped at \($0.phrase)" }
            sentences.append("\(t.neverGotCode.count) of \(t.devices) devices never got a code: \(stops.joined(separator: ", ")).")
        }
        if t.throttled > 0 {
            sentences.append("429s: \(t.throttled) (\(Self.byStage(t.stages, \.throttled))).")
        }
        if t.serverErrors > 0 {
            sentences.append("5xx: \(t.serverErrors) (\(Self.byStage(t.stages, \.serverErrors))).")
        }
        let other = t.failed - t.throttled - t.serverErrors
        if other > 0 {
            sentences.append(
                "Other errors: \(other) (\(Self.byStage(t.stages) { $0.failed - $0.throttled - $0.serverErrors }))."
            )
        }
        if !trouble.windows.isEmpty {
            let days = windowsSpanDays
            let spans = trouble.windows.prefix(3).map {
                "\($0.label) \(Self.clock($0.startMs, withDate: days))–\(Self.clock($0.endMs, withDate: days))"
            }
            let more = trouble.windows.count > 3 ? " and \(trouble.windows.count - 3) more" : ""
            sentences.append(
                "\(trouble.windows.count) trouble window\(trouble.windows.count == 1 ? "" : "s"): \(spans.joined(separator: ", "))\(more)."
            )
        }
        if fleets.count > 1 {
            let hurt = fleets.filter { !$0.trouble.neverGotCode.isEmpty || $0.trouble.failed > 0 }
            let quiet = fleets.filter { $0.trouble.neverGotCode.isEmpty && $0.trouble.failed == 0 }
            if !hurt.isEmpty && !quiet.isEmpty {
                sentences.append(
                    "Trouble in fleet\(hurt.count == 1 ? "" : "s") \(hurt.map(\.fleet).joined(separator: ", ")); no errors in \(quiet.map(\.fleet).joined(separator: ", "))."
                )
            }
        }
        if sentences.isEmpty {
            let polls = fleet.polls
            sentences.append(
                "No trouble: \(t.devicesWithCode) of \(t.devices) devices got a code; no 429s, 5xx or other errors in \(polls) poll\(polls == 1 ? "" : "s") and \(requests.requests) other request\(requests.requests == 1 ? "" : "s")."
            )
        }
        return sentences
    }

    /// `registration 240, poll 10`: the stages with a non-zero count, largest first.
    static func byStage(_ stages: [StageTrouble], _ pick: (StageTrouble) -> Int) -> String {
        stages.map { ($0.stage, pick($0)) }.filter { $0.1 > 0 }
            .enumerated().sorted { ($1.element.1, $0.offset) < ($0.element.1, $1.offset) }
            .map { "\($0.element.0) \($0.element.1)" }.joined(separator: ", ")
    }

    /// `12:03:05` (UTC), or `01-15 12:03:05` with `withDate`.
    static func clock(_ ms: Int64, withDate: Bool = false) -> String {
        let p = UTCText.parts(ms)
        return (withDate ? "\(NumberText.twoDigits(p.month))-\(NumberText.twoDigits(p.day)) " : "") + UTCText.clock(p)
    }

    /// Whether the trouble windows fall on more than one UTC day (then their times carry the date).
    var windowsSpanDays: Bool {
        guard let first = trouble.windows.first, let last = trouble.windows.last else { return false }
        return UTCText.floorDiv(first.startMs, 86_400_000) != UTCText.floorDiv(last.endMs - 1, 86_400_000)
    }

    /// Computes the trouble figures, per device, per fleet and fleet-wide. `fleetOf` maps every
    /// device name the report lists to its fleet.
    static func computeTrouble(
        polls: [PollRecord],
        requests: [RequestRecord],
        devices: inout [DeviceReport],
        fleetOf: [String: String],
        stageKinds: [String]
    ) -> (Trouble, [String: TroubleFigures]) {
        let times = polls.map(\.sentMs) + requests.map(\.sentMs)
        let first = times.min() ?? 0
        let last = times.max() ?? 0
        let bucketMs = bucketWidth(spanMs: last - first)
        let origin = UTCText.floorDiv(first, bucketMs) * bucketMs
        let bucketCount = times.isEmpty ? 0 : Int((last - origin) / bucketMs) + 1
        func bucketIndex(_ ms: Int64) -> Int { Int((ms - origin) / bucketMs) }
        let emptyTimeline = (0..<bucketCount).map { TimeBucket(startMs: origin + Int64($0) * bucketMs) }

        // One event per request or poll: who, which stage, when, and how it went.
        struct Item {
            var device: String
            var stage: String
            var sentMs: Int64
            var outcome: String
            var status: Int?
        }
        let items =
            requests.map { Item(device: $0.device, stage: $0.stage, sentMs: $0.sentMs, outcome: $0.outcome, status: $0.httpStatus) }
            + polls.map { Item(device: $0.device, stage: "poll", sentMs: $0.sentMs, outcome: $0.outcome, status: $0.httpStatus) }
        func isThrottled(_ item: Item) -> Bool { item.outcome == "throttled" || item.status == 429 }
        func isServerError(_ item: Item) -> Bool { item.outcome == "server-error" || (500...599).contains(item.status ?? 0) }
        func isError(_ item: Item) -> Bool { errorOutcomes.contains(item.outcome) || isThrottled(item) || isServerError(item) }

        let stageOrder = stageKinds + ["poll"]
        var byFleet: [String: TroubleFigures] = [:]
        var all = TroubleFigures()
        all.timeline = emptyTimeline
        var stagesAll: [String: StageTrouble] = [:]
        var stagesByFleet: [String: [String: StageTrouble]] = [:]
        var deviceTrouble: [String: DeviceTrouble] = [:]
        // Errors per bucket by stage and by fleet, for naming what a trouble window was made of.
        var stageErrorsByBucket: [Int: [String: Int]] = [:]
        var fleetErrorsByBucket: [Int: [String: Int]] = [:]
        for item in items {
            let fleetName = fleetOf[item.device] ?? noFleetName
            var figures = byFleet[fleetName] ?? TroubleFigures()
            if figures.timeline.isEmpty { figures.timeline = emptyTimeline }
            let throttled = isThrottled(item)
            let serverError = isServerError(item)
            let error = isError(item)
            func add(_ stage: inout StageTrouble) {
                stage.requests += 1
                if error { stage.failed += 1 }
                if throttled { stage.throttled += 1 }
                if serverError { stage.serverErrors += 1 }
            }
            add(&stagesAll[item.stage, default: StageTrouble(stage: item.stage)])
            add(&stagesByFleet[fleetName, default: [:]][item.stage, default: StageTrouble(stage: item.stage)])
            func count(_ bucket: inout TimeBucket) {
                bucket.requests += 1
                if throttled {
                    bucket.throttled += 1
                } else if serverError {
                    bucket.serverErrors += 1
                } else if error {
                    bucket.otherErrors += 1
                }
            }
            let index = bucketIndex(item.sentMs)
            if error {
                stageErrorsByBucket[index, default: [:]][item.stage, default: 0] += 1
                fleetErrorsByBucket[index, default: [:]][fleetName, default: 0] += 1
            }
            count(&all.timeline[index])
            count(&figures.timeline[index])
            byFleet[fleetName] = figures
            var device = deviceTrouble[item.device] ?? DeviceTrouble()
            if throttled { device.throttled += 1 }
            if serverError { device.serverErrors += 1 }
            if error { device.errors += 1 }
            deviceTrouble[item.device] = device
        }
        func ordered(_ stages: [String: StageTrouble]) -> [StageTrouble] {
            let known = stageOrder.compactMap { stages[$0] }
            let others = stages.keys.filter { !stageOrder.contains($0) }.sorted().compactMap { stages[$0] }
            return known + others
        }
        all.stages = ordered(stagesAll)
        for (name, stages) in stagesByFleet { byFleet[name]?.stages = ordered(stages) }

        // Devices: code or not, where they stopped, their last error.
        var lastRequest: [String: RequestRecord] = [:]
        var lastFailed: [String: RequestRecord] = [:]
        for request in requests {
            // The latest by send time; of equal times, the later logged.
            if lastRequest[request.device].map({ $0.sentMs <= request.sentMs }) ?? true { lastRequest[request.device] = request }
            if request.outcome != "ok", lastFailed[request.device].map({ $0.sentMs <= request.sentMs }) ?? true {
                lastFailed[request.device] = request
            }
        }
        var stopGroups: [String: [(key: String, stage: String?, status: String?, devices: [String])]] = [:]
        var allGroups: [(key: String, stage: String?, status: String?, devices: [String])] = []
        func note(
            _ groups: inout [(key: String, stage: String?, status: String?, devices: [String])],
            _ stage: String?,
            _ status: String?,
            _ device: String
        ) {
            let key = "\(stage ?? "")\u{0}\(status ?? "")"
            if let index = groups.firstIndex(where: { $0.key == key }) {
                groups[index].devices.append(device)
            } else {
                groups.append((key, stage, status, [device]))
            }
        }
        for index in devices.indices {
            let name = devices[index].device
            let fleetName = fleetOf[name] ?? noFleetName
            var trouble = deviceTrouble[name] ?? DeviceTrouble()
            trouble.lastError = lastFailed[name].map(describe)
            trouble.lastErrorShort = lastFailed[name].map { request in
                var text = "\(request.stage) \(request.httpStatus.map(String.init) ?? request.outcome)"
                if let code = request.errorCode { text += " (\(code))" }
                return text
            }
            var figures = byFleet[fleetName] ?? TroubleFigures()
            if figures.timeline.isEmpty { figures.timeline = emptyTimeline }
            figures.devices += 1
            all.devices += 1
            if let failed = devices[index].failedOnboarding {
                trouble.gotCode = false
                if let request = lastRequest[name] {
                    trouble.stoppedAt = request.stage
                    trouble.stopStatus = request.outcome == "ok" ? "ok" : (request.httpStatus.map(String.init) ?? request.outcome)
                } else {
                    trouble.stopStatus = failed.lastFailure?.errorId
                }
                figures.neverGotCode.append(name)
                all.neverGotCode.append(name)
                note(&stopGroups[fleetName, default: []], trouble.stoppedAt, trouble.stopStatus, name)
                note(&allGroups, trouble.stoppedAt, trouble.stopStatus, name)
            } else {
                figures.devicesWithCode += 1
                all.devicesWithCode += 1
            }
            byFleet[fleetName] = figures
            devices[index].trouble = trouble
        }
        func stops(_ groups: [(key: String, stage: String?, status: String?, devices: [String])]) -> [StopGroup] {
            groups.enumerated().sorted { ($1.element.devices.count, $0.offset) < ($0.element.devices.count, $1.offset) }
                .map { StopGroup(stage: $0.element.stage, status: $0.element.status, devices: $0.element.devices) }
        }
        all.stops = stops(allGroups)
        for (name, groups) in stopGroups { byFleet[name]?.stops = stops(groups) }

        let windows = troubleWindows(
            timeline: all.timeline,
            bucketMs: bucketMs,
            stageErrors: { start, end in
                var counts: [String: Int] = [:]
                for index in bucketIndex(start)..<bucketIndex(end) { counts.merge(stageErrorsByBucket[index] ?? [:], uniquingKeysWith: +) }
                return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
            },
            fleetErrors: { start, end in
                var counts: [String: Int] = [:]
                for index in bucketIndex(start)..<bucketIndex(end) { counts.merge(fleetErrorsByBucket[index] ?? [:], uniquingKeysWith: +) }
                return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map(\.key)
            }
        )
        return (Trouble(figures: all, bucketMs: bucketMs, windows: windows), byFleet)
    }
}
