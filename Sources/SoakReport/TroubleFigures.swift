import RegcodeRecords

// What went wrong in a run: devices that never got a code, 429s and 5xx by stage (polls
// included), errors over time with the windows where the backend misbehaved, and every figure per
// fleet.

/// The fleet name reports use for devices whose `devices.fleet` is NULL (or that are no longer stored).
public let noFleetName = "(no fleet)"

/// Failures of one stage. Polls are the stage `poll`.
public struct StageTrouble: Sendable, Equatable {
    public var stage: RequestStage
    /// Logged requests (or polls), each retry counted.
    public var requests: Int = 0
    /// Requests whose outcome was an error (see ``SoakReport/errorPollOutcomes`` and
    /// ``SoakReport/errorRequestOutcomes``), 429s and 5xx included.
    public var failed: Int = 0
    /// Answered 429.
    public var throttled: Int = 0
    /// Answered 5xx.
    public var serverErrors: Int = 0

    public init(stage: RequestStage) {
        self.stage = stage
    }
}

/// One device's trouble figures.
public struct DeviceTrouble: Sendable, Equatable {
    public var gotCode: Bool = true
    /// For a device without a code: the stage of its last logged request, `nil` when none was logged.
    public var stoppedAt: RequestStage?
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
    public var stage: RequestStage?
    public var status: String?
    public var devices: [String]

    public init(stage: RequestStage?, status: String?, devices: [String]) {
        self.stage = stage
        self.status = status
        self.devices = devices
    }

    /// `registration (429)`, `session (503)`, `no logged request`.
    public var phrase: String {
        let place = stage?.rawValue ?? "no logged request"
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
    public var worstStage: RequestStage?
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
        worstStage: RequestStage?,
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
    public func stage(_ stage: RequestStage) -> StageTrouble? {
        stages.first { $0.stage == stage }
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
        stageErrors: (Int64, Int64) -> RequestStage?,
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
}
