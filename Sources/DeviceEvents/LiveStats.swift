import RegcodeEngine
import RegcodeSupport
import Synchronization

/// Live figures for the web console, `fleets.stats` and `devices.list`: per fleet, polls, 429s and errors over a
/// sliding window of one-second buckets, and each device's ``LastOutcome``.
///
/// Fed by the event pipeline's observer with every stored step; memory is one window per fleet and one outcome per
/// device, whatever the fleet size.
package final class LiveStats: Sendable {
    /// Seconds of history kept: the "per minute" figures.
    package static let windowSeconds = 60
    /// Seconds the polls-per-second rate is averaged over.
    package static let rateSeconds = 10

    /// A poll sent this much later than planned counts as late: the emulator fell behind its own schedule (the
    /// soak report's `generatorLatenessBoundMs` is the same second).
    package static let lateBoundMs: Int64 = 1000

    package struct Bucket: Sendable, Equatable {
        package var second: Int64 = -1
        package var polls = 0
        package var throttled = 0
        package var errors = 0
        /// Polls sent more than ``LiveStats/lateBoundMs`` after their planned time.
        package var late = 0
        /// Polls by lateness: bin 0 holds up to 1 ms late, bin i up to 2^i ms, the last everything beyond.
        package var lateness = LatenessBins()
        /// Polls by how long their answer took, in the same bins.
        package var latency = LatenessBins()
        /// Polls answered `authenticated`: logins by code.
        package var logins = 0
    }

    /// Polls counted by how late they went out, in powers of two of milliseconds: enough for a p50 or p99 within a
    /// factor of two, at a fixed cost per second whatever the fleet size.
    package struct LatenessBins: Sendable, Equatable {
        package static let count = 16
        package var counts = [Int](repeating: 0, count: LatenessBins.count)

        package init() {}

        package mutating func add(latenessMs: Int64) {
            var bin = 0
            var bound: Int64 = 1
            while latenessMs > bound && bin < Self.count - 1 {
                bin += 1
                bound <<= 1
            }
            counts[bin] += 1
        }

        package mutating func merge(_ other: LatenessBins) {
            for index in counts.indices { counts[index] += other.counts[index] }
        }

        /// The upper bound (ms) of the bin holding the `percent`-th percentile (nearest rank), nil when empty.
        package func percentile(_ percent: Int) -> Int64? {
            let total = counts.reduce(0, +)
            guard total > 0 else { return nil }
            let rank = max(1, (percent * total + 99) / 100)
            var seen = 0
            for (bin, count) in counts.enumerated() {
                seen += count
                if seen >= rank { return Int64(1) << bin }
            }
            return Int64(1) << (Self.count - 1)
        }
    }

    /// One fleet's counters.
    package struct Counters: Sendable {
        package var buckets = [Bucket](repeating: Bucket(), count: LiveStats.windowSeconds)
        package var polls = 0
        package var throttled = 0
        package var errors = 0

        package init() {}

        package mutating func add(second: Int64, polls: Int, throttled: Int, errors: Int, late: Int = 0, lateness: LatenessBins? = nil) {
            let index = Int(second % Int64(LiveStats.windowSeconds))
            if buckets[index].second != second { buckets[index] = Bucket(second: second) }
            if let lateness { buckets[index].lateness.merge(lateness) }
            buckets[index].polls += polls
            buckets[index].throttled += throttled
            buckets[index].errors += errors
            buckets[index].late += late
            self.polls += polls
            self.throttled += throttled
            self.errors += errors
        }

        /// Counts one poll's lateness, latency and login in the bucket of `second` (``add(second:polls:throttled:errors:late:lateness:)`` made it).
        package mutating func addPoll(second: Int64, latenessMs: Int64, latencyMs: Double, login: Bool) {
            let index = Int(second % Int64(LiveStats.windowSeconds))
            guard buckets[index].second == second else { return }
            buckets[index].lateness.add(latenessMs: latenessMs)
            buckets[index].latency.add(latenessMs: Int64(latencyMs.rounded(.up)))
            if login { buckets[index].logins += 1 }
        }

        /// Adds another fleet's counters (for totals); both must cover the same seconds.
        package mutating func merge(_ other: Counters) {
            for bucket in other.buckets where bucket.second >= 0 {
                add(
                    second: bucket.second,
                    polls: bucket.polls,
                    throttled: bucket.throttled,
                    errors: bucket.errors,
                    late: bucket.late,
                    lateness: bucket.lateness
                )
                let index = Int(bucket.second % Int64(LiveStats.windowSeconds))
                buckets[index].latency.merge(bucket.latency)
                buckets[index].logins += bucket.logins
            }
            // `add` counted the window's buckets into the totals; the totals are the other fleet's, whole.
            polls += other.polls - other.buckets.reduce(0) { $0 + ($1.second >= 0 ? $1.polls : 0) }
            throttled += other.throttled - other.buckets.reduce(0) { $0 + ($1.second >= 0 ? $1.throttled : 0) }
            errors += other.errors - other.buckets.reduce(0) { $0 + ($1.second >= 0 ? $1.errors : 0) }
        }

        /// Sums of the buckets in the `seconds` up to and including `now`.
        package func recent(now: Int64, seconds: Int) -> Bucket {
            var sum = Bucket(second: now)
            for bucket in buckets where bucket.second > now - Int64(seconds) && bucket.second <= now {
                sum.polls += bucket.polls
                sum.throttled += bucket.throttled
                sum.errors += bucket.errors
                sum.late += bucket.late
                sum.lateness.merge(bucket.lateness)
                sum.latency.merge(bucket.latency)
                sum.logins += bucket.logins
            }
            return sum
        }
    }

    /// A device's latest polls, for the console's rows between two lists: when, answered how, for which code.
    package struct PollNote: Sendable, Equatable {
        package var code: String
        package var lastPollMs: Int64
        package var httpStatus: Int?
        /// Send times of the latest polls, newest last, at most ``PollNote/kept``: enough to count a second's polls
        /// at any interval the engine allows; a device polling faster is caught up by the next full list.
        package var recent: [Int64] = []
        package static let kept = 4

        /// Polls sent after `sinceMs`.
        package func polls(after sinceMs: Int64) -> Int { recent.count { $0 > sinceMs } }
    }

    private struct State {
        var fleets: [String: Counters] = [:]
        var deviceFleets: [String: String] = [:]
        var outcomes: [String: LastOutcome] = [:]
        var polls: [String: PollNote] = [:]
    }

    private let state = Mutex(State())

    package init() {}
    /// The closure sits in a struct: a bare function type behind `Mutex`'s generic `inout` is re-abstracted on every
    /// access, and each `withLock` wrapped it in two more thunks, a chain whose release overflowed the stack at exit.
    private struct Resolver: Sendable {
        let resolve: @Sendable (String) -> String?
    }
    private let resolver = Mutex<Resolver?>(nil)

    /// The fleet a device belongs to when it is first seen (the daemon's catalog and stored devices know).
    package func setFleetResolver(_ resolve: @escaping @Sendable (String) -> String?) {
        resolver.withLock { $0 = Resolver(resolve: resolve) }
    }

    /// The name figures of devices without a fleet are kept under.
    package static let noFleet = "(no fleet)"

    package func record(_ steps: [DeviceStep]) {
        let resolve = resolver.withLock { $0?.resolve }
        state.withLock { state in
            // Most steps carry none of what is counted here: a request's record before it is sent, a snapshot.
            for step in steps where !(step.polls.isEmpty && step.requests.isEmpty && step.events.isEmpty) {
                let fleet: String
                if let known = state.deviceFleets[step.device] {
                    fleet = known
                } else {
                    fleet = resolve?(step.device) ?? Self.noFleet
                    state.deviceFleets[step.device] = fleet
                }
                // One pass with switches: this runs for every poll of every device.
                var polls = 0
                var throttled = 0
                var errors = 0
                var late = 0
                for poll in step.polls {
                    switch poll.outcome {
                    case .abandoned: continue
                    case .throttled: throttled += 1
                    case .serverError, .transportError, .malformed: errors += 1
                    default: break
                    }
                    polls += 1
                    if poll.sentEpochMs - poll.plannedEpochMs > Self.lateBoundMs { late += 1 }
                }
                for request in step.requests {
                    switch request.outcome {
                    case .throttled: throttled += 1
                    case .serverError, .transportError, .malformed: errors += 1
                    default: break
                    }
                }
                if polls + throttled + errors > 0 {
                    state.fleets[fleet, default: Counters()].add(
                        second: step.epochMs / 1000,
                        polls: polls,
                        throttled: throttled,
                        errors: errors,
                        late: late
                    )
                    // In place, into the second's bucket: no array per step on the path every poll takes.
                    for poll in step.polls where poll.outcome != .abandoned {
                        state.fleets[fleet, default: Counters()].addPoll(
                            second: step.epochMs / 1000,
                            latenessMs: poll.sentEpochMs - poll.plannedEpochMs,
                            latencyMs: poll.latencyMs,
                            login: poll.outcome == .authenticated
                        )
                    }
                }
                if let outcome = LastOutcome.of(step) {
                    state.outcomes[step.device] = outcome
                }
                for poll in step.polls where poll.outcome != .abandoned {
                    var note = state.polls[step.device] ?? PollNote(code: poll.code, lastPollMs: poll.sentEpochMs)
                    if note.code != poll.code { note = PollNote(code: poll.code, lastPollMs: poll.sentEpochMs) }
                    note.lastPollMs = max(note.lastPollMs, poll.sentEpochMs)
                    note.httpStatus = poll.httpStatus
                    note.recent.append(poll.sentEpochMs)
                    if note.recent.count > PollNote.kept { note.recent.removeFirst(note.recent.count - PollNote.kept) }
                    state.polls[step.device] = note
                }
            }
        }
    }

    /// The devices that polled after `sinceMs`, with their latest poll and outcome.
    package func polled(after sinceMs: Int64) -> [(device: String, note: PollNote, outcome: LastOutcome?)] {
        state.withLock { state in
            state.polls.filter { $0.value.lastPollMs > sinceMs }.map { ($0.key, $0.value, state.outcomes[$0.key]) }
        }
    }

    package func lastOutcome(of device: String) -> LastOutcome? {
        state.withLock { $0.outcomes[device] }
    }

    /// Forgets a removed device (a new device of the same name starts clean).
    package func forget(_ device: String) {
        state.withLock { state in
            state.outcomes[device] = nil
            state.deviceFleets[device] = nil
            state.polls[device] = nil
        }
    }

    /// The fleets whose every device's last outcome carries the same error code among `codes` (a backend no device
    /// reaches, such as a refused certificate), by fleet name.
    package func fleetsFailingAlike(codes: (String) -> Bool) -> [String: String] {
        state.withLock { state in
            var shared: [String: String?] = [:]
            for (device, fleet) in state.deviceFleets {
                let why = state.outcomes[device]?.why.flatMap { codes($0) ? $0 : nil }
                if let seen = shared[fleet] {
                    if seen != why { shared[fleet] = .some(nil) }
                } else {
                    shared[fleet] = .some(why)
                }
            }
            return shared.compactMapValues { $0 }
        }
    }

    /// Counters of every fleet that has recorded anything.
    package func counters() -> [String: Counters] {
        state.withLock { $0.fleets }
    }

    /// Every fleet's sums over the `seconds` up to and including `nowSecond`.
    package func recentTotals(nowSecond: Int64, seconds: Int) -> Bucket {
        state.withLock { state in
            var sum = Bucket(second: nowSecond)
            for counters in state.fleets.values {
                let recent = counters.recent(now: nowSecond, seconds: seconds)
                sum.polls += recent.polls
                sum.throttled += recent.throttled
                sum.errors += recent.errors
                sum.late += recent.late
                sum.lateness.merge(recent.lateness)
            }
            return sum
        }
    }

    /// One fleet's last ``windowSeconds`` as per-second series, oldest first, ending at `nowSecond`: polls, 429s,
    /// errors, logins, and lateness and latency p50/p99 (bin bounds, null in a second without polls). What the
    /// console's live charts draw.
    package static func series(_ counters: Counters?, nowSecond: Int64) -> JSONValue {
        let counters = counters ?? Counters()
        var seconds: [Bucket] = []
        for second in (nowSecond - Int64(windowSeconds) + 1)...nowSecond {
            let bucket = counters.buckets[Int(((second % Int64(windowSeconds)) + Int64(windowSeconds)) % Int64(windowSeconds))]
            seconds.append(bucket.second == second ? bucket : Bucket(second: second))
        }
        func ints(_ pick: (Bucket) -> Int) -> JSONValue { .array(seconds.map { .int(Int64(pick($0))) }) }
        func bins(_ pick: (Bucket) -> LatenessBins, _ percent: Int) -> JSONValue {
            .array(seconds.map { pick($0).percentile(percent).map { .int($0) } ?? .null })
        }
        return [
            "end": .int(nowSecond),
            "polls": ints(\.polls),
            "throttled": ints(\.throttled),
            "errors": ints(\.errors),
            "logins": ints(\.logins),
            "latenessP50": bins(\.lateness, 50),
            "latenessP99": bins(\.lateness, 99),
            "latencyP50": bins(\.latency, 50),
            "latencyP99": bins(\.latency, 99),
        ]
    }

    /// The `fleets.stats` figures of one fleet's counters at `nowSecond`.
    package static func figures(_ counters: Counters?, nowSecond: Int64) -> [String: JSONValue] {
        let counters = counters ?? Counters()
        let minute = counters.recent(now: nowSecond, seconds: windowSeconds)
        let rate = counters.recent(now: nowSecond, seconds: rateSeconds)
        return [
            "pollsPerSecond": .double((Double(rate.polls) / Double(rateSeconds) * 100).rounded() / 100),
            "throttledPerMinute": .int(Int64(minute.throttled)),
            "errorsPerMinute": .int(Int64(minute.errors)),
            "polls": .int(Int64(counters.polls)),
            "throttled": .int(Int64(counters.throttled)),
            "errors": .int(Int64(counters.errors)),
        ]
    }
}
