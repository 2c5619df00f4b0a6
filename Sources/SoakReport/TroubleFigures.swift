import RegcodeRecords

// What went wrong in a run: devices that never got a code, 429s and 5xx by stage (polls
// included), errors over time with the windows where the backend misbehaved, and every figure per
// fleet.

/// The fleet name reports use for devices whose `devices.fleet` is NULL (or that are no longer stored).
package let noFleetName = "(no fleet)"

/// Failures of one stage. Polls are the stage `poll`.
package struct StageTrouble: Sendable, Equatable {
    package var stage: RequestStage
    /// Logged requests (or polls), each retry counted.
    package var requests: Int = 0
    /// Requests whose outcome was an error (see ``SoakReport/errorPollOutcomes`` and
    /// ``SoakReport/errorRequestOutcomes``), 429s and 5xx included.
    package var failed: Int = 0
    /// Answered 429.
    package var throttled: Int = 0
    /// Answered 5xx.
    package var serverErrors: Int = 0

    package init(stage: RequestStage) {
        self.stage = stage
    }
}

/// One device's trouble figures.
package struct DeviceTrouble: Sendable, Equatable {
    package var gotCode: Bool = true
    /// For a device without a code: the stage of its last logged request, `nil` when none was logged.
    package var stoppedAt: RequestStage?
    /// For a device without a code: its last request's HTTP status, else its outcome (`429`,
    /// `transport-error`), or `ok` when that request succeeded; the last failure event's id when no
    /// request was logged.
    package var stopStatus: String?
    /// The last request that did not end `ok` (any device), as `registration 429 throttled (error code)`.
    package var lastError: String?
    /// The same, shorter: `registration 429 (error code)`, the outcome only without a status.
    package var lastErrorShort: String?
    /// 429s and 5xx over polls and other requests.
    package var throttled: Int = 0
    package var serverErrors: Int = 0
    /// Error outcomes over polls and other requests (429s and 5xx included).
    package var errors: Int = 0

    package init() {}
}

/// How many devices without a code stopped at one stage with one status.
package struct StopGroup: Sendable, Equatable {
    /// The stage, or `nil`: no request was logged.
    package var stage: RequestStage?
    package var status: String?
    package var devices: [String]

    package init(stage: RequestStage?, status: String?, devices: [String]) {
        self.stage = stage
        self.status = status
        self.devices = devices
    }

    /// `registration (429)`, `session (503)`, `no logged request`.
    package var phrase: String {
        let place = stage?.rawValue ?? "no logged request"
        guard let status else { return place }
        return "\(place) (\(status))"
    }
}

/// Requests (polls included) of one time bucket.
package struct TimeBucket: Sendable, Equatable {
    package var startMs: Int64
    package var requests: Int = 0
    package var throttled: Int = 0
    package var serverErrors: Int = 0
    /// Errors other than 429 and 5xx (transport, malformed, 4xx).
    package var otherErrors: Int = 0

    package init(startMs: Int64) {
        self.startMs = startMs
    }

    package var errors: Int { throttled + serverErrors + otherErrors }
}

/// A run of time buckets where the backend misbehaved, found from the logs.
package struct TroubleWindow: Sendable, Equatable {
    /// `T1`, `T2`, … in time order.
    package var label: String
    package var startMs: Int64
    /// The end of its last bucket.
    package var endMs: Int64
    package var requests: Int
    package var throttled: Int
    package var serverErrors: Int
    package var otherErrors: Int
    /// The stage with most errors in the window.
    package var worstStage: RequestStage?
    /// Fleets with errors in the window, most errors first.
    package var fleets: [String]

    package init(
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
package struct TroubleFigures: Sendable, Equatable {
    package var devices: Int = 0
    package var devicesWithCode: Int = 0
    /// Devices that never got a code, in natural name order.
    package var neverGotCode: [String] = []
    /// The devices without a code grouped by where they stopped, largest group first.
    package var stops: [StopGroup] = []
    /// Every stage with requests, in ``SoakReport/stageKinds`` order, then `poll`, then others.
    package var stages: [StageTrouble] = []
    /// Errors over time; buckets of ``SoakReport/Trouble/bucketMs``, the same for every fleet.
    package var timeline: [TimeBucket] = []

    package init() {}

    package var throttled: Int { stages.reduce(0) { $0 + $1.throttled } }
    package var serverErrors: Int { stages.reduce(0) { $0 + $1.serverErrors } }
    package var failed: Int { stages.reduce(0) { $0 + $1.failed } }

    /// The figures of `stage`, if it saw requests.
    package func stage(_ stage: RequestStage) -> StageTrouble? {
        stages.first { $0.stage == stage }
    }
}

/// Every figure of one configured fleet (`devices.fleet`).
package struct FleetReport: Sendable, Equatable {
    package var fleet: String
    package var figures: PollFigures
    package var requests: RequestFigures
    package var trouble: TroubleFigures
    /// The fleet's own chart series (its intervals, its lateness).
    package var series: ReportSeries

    package init(fleet: String, figures: PollFigures, requests: RequestFigures, trouble: TroubleFigures, series: ReportSeries) {
        self.fleet = fleet
        self.figures = figures
        self.requests = requests
        self.trouble = trouble
        self.series = series
    }
}

extension SoakReport {
    /// A bucket is trouble when at least this share of its requests failed…
    package static let troubleShare = 0.05
    /// …and at least this many: one stray error in a quiet second is not a window.
    package static let troubleMinimumErrors = 2

    /// The run's trouble: the fleet-wide figures, the bucket width and the windows.
    package struct Trouble: Sendable, Equatable {
        package var figures: TroubleFigures
        /// Width of the timeline buckets: a minute, or finer for runs shorter than two hours.
        package var bucketMs: Int64
        package var windows: [TroubleWindow]

        package init(figures: TroubleFigures, bucketMs: Int64, windows: [TroubleWindow]) {
            self.figures = figures
            self.bucketMs = bucketMs
            self.windows = windows
        }
    }

    /// The bucket width for a run of `spanMs`: a minute, or for a short run the smallest round
    /// step giving fewer than 240 buckets, so a burst of errors stays visible as its own bars.
    package static func bucketWidth(spanMs: Int64) -> Int64 {
        let steps: [Int64] = [1000, 2000, 5000, 10_000, 15_000, 30_000]
        return steps.first { spanMs / $0 < 240 } ?? 60_000
    }

    /// Runs of buckets where at least ``troubleShare`` of the requests, and at least
    /// ``troubleMinimumErrors`` requests, failed; joined across a single quiet bucket so one
    /// flapping fault reads as one window.
    package static func troubleWindows(
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
