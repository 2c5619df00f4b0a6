import DeviceEvents
import RegcodeSupport

/// Whether the emulator keeps up with its own schedule, from one sample a second: the reasons it is behind now,
/// the windows it was behind in, and how long for each reason. Pure: the samples and their times come in.
///
/// A soak whose generator fell behind measures the generator, not the backend; `daemon.status`, `/metrics`, the
/// console and the run's report say so before anything else.
struct GeneratorHealthTracker: Sendable {
    /// Why the emulator is behind.
    enum Reason: String, Sendable, CaseIterable, Comparable {
        /// More than 1 % of the last 10 s's polls went out over a second late (their p99 passed the bound).
        case pollLateness = "poll-lateness"
        /// The fleet is held: the database refuses or lags writes, so no new work starts.
        case fleetHeld = "fleet-held"
        /// Backend calls wait for a slot: `max_concurrent_requests` are in flight.
        case callsAtCap = "calls-at-cap"
        /// The process used at least 95 % of the cores it may run on over the last 10 s.
        case cpuSaturated = "cpu-saturated"

        static func < (lhs: Reason, rhs: Reason) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// What one sample saw, over the seconds just before it.
    struct Sample: Sendable {
        var polls = 0
        var latePolls = 0
        var held = false
        var callsWaitingForSlot = 0
        /// CPU time over wall time, as a share of the cores available; nil before two readings.
        var cpuShare: Double?
    }

    /// A stretch of time the emulator was behind, with every reason seen in it.
    struct Window: Sendable, Equatable {
        var startMs: Int64
        var endMs: Int64
        var reasons: Set<Reason>
    }

    /// Closed windows kept for `daemon.status` (the oldest are dropped; the totals keep counting).
    static let keptWindows = 50
    static let cpuSaturationShare = 0.95

    private(set) var open: Window?
    private(set) var closed: [Window] = []
    private(set) var behindMs: [Reason: Int64] = [:]
    private(set) var windowCount = 0
    private var lastSampleMs: Int64?

    /// The reasons `sample` shows the emulator behind, in a fixed order.
    static func reasons(_ sample: Sample) -> [Reason] {
        var reasons: [Reason] = []
        if sample.polls > 0 && sample.latePolls * 100 > sample.polls { reasons.append(.pollLateness) }
        if sample.held { reasons.append(.fleetHeld) }
        if sample.callsWaitingForSlot > 0 { reasons.append(.callsAtCap) }
        if let share = sample.cpuShare, share >= cpuSaturationShare { reasons.append(.cpuSaturated) }
        return reasons
    }

    /// Takes the sample made at `nowMs`; returns the reasons it shows.
    @discardableResult
    mutating func observe(_ sample: Sample, atMs nowMs: Int64) -> [Reason] {
        let reasons = Self.reasons(sample)
        let elapsed = lastSampleMs.map { max(0, nowMs - $0) } ?? 0
        lastSampleMs = nowMs
        for reason in reasons { behindMs[reason, default: 0] += elapsed }
        if reasons.isEmpty {
            if let window = open {
                closed.append(window)
                if closed.count > Self.keptWindows { closed.removeFirst(closed.count - Self.keptWindows) }
                open = nil
            }
        } else if var window = open {
            window.endMs = nowMs
            window.reasons.formUnion(reasons)
            open = window
        } else {
            // The window starts a sample's length before the first sample that saw it.
            open = Window(startMs: nowMs - elapsed, endMs: nowMs, reasons: Set(reasons))
            windowCount += 1
        }
        return reasons
    }

    /// Whether the emulator is behind now.
    var isBehind: Bool { open != nil }

    /// `daemon.status`'s `generator` member.
    var status: JSONValue {
        func window(_ window: Window, open: Bool) -> JSONValue {
            [
                "start": .string(EventEncoding.timestamp(window.startMs)),
                "end": open ? .null : .string(EventEncoding.timestamp(window.endMs)),
                "reasons": .array(window.reasons.sorted().map { .string($0.rawValue) }),
            ]
        }
        var seconds: [String: JSONValue] = [:]
        for reason in Reason.allCases { seconds[reason.rawValue] = .double(Double(behindMs[reason] ?? 0) / 1000) }
        return [
            "behind": .bool(isBehind),
            "reasons": .array((open?.reasons.sorted() ?? []).map { .string($0.rawValue) }),
            "windows": .int(Int64(windowCount)),
            "recentWindows": .array(closed.map { window($0, open: false) } + (open.map { [window($0, open: true)] } ?? [])),
            "behindSeconds": .object(seconds),
        ]
    }
}
