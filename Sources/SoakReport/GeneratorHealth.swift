// Whether the emulator kept its own schedule: polls it sent late against their plan mean the figures of that
// time measure the generator, not the backend. Found from the poll log's planned and sent times.

/// A run of time buckets in which the emulator fell behind its own poll schedule.
package struct GeneratorWindow: Sendable, Equatable {
    /// `G1`, `G2`, … in time order.
    package var label: String
    package var startMs: Int64
    /// The end of its last bucket.
    package var endMs: Int64
    /// Polls sent in the window, and those sent later than ``SoakReport/generatorLatenessBoundMs``.
    package var polls: Int
    package var latePolls: Int
    /// The 99th percentile and the worst of the window's lateness, milliseconds.
    package var latenessP99Ms: Int64
    package var worstLatenessMs: Int64

    package init(label: String, startMs: Int64, endMs: Int64, polls: Int, latePolls: Int, latenessP99Ms: Int64, worstLatenessMs: Int64) {
        self.label = label
        self.startMs = startMs
        self.endMs = endMs
        self.polls = polls
        self.latePolls = latePolls
        self.latenessP99Ms = latenessP99Ms
        self.worstLatenessMs = worstLatenessMs
    }
}

extension SoakReport {
    /// A poll sent this much later than planned means the emulator fell behind (its timers fire within
    /// `timer_slack`, 10 ms by default; a second is far past anything a healthy process shows).
    package static let generatorLatenessBoundMs: Int64 = 1000

    /// The windows, on the trouble timeline's buckets, whose polls' lateness p99 passed
    /// ``generatorLatenessBoundMs``; behind buckets with no on-time bucket between them join into one window.
    static func generatorWindows(lateness: [LatenessPoint], bucketMs: Int64) -> [GeneratorWindow] {
        guard let first = lateness.first, bucketMs > 0 else { return [] }
        let origin = UTCText.floorDiv(first.sentMs, bucketMs) * bucketMs
        var buckets: [Int64: [Int64]] = [:]
        for point in lateness { buckets[UTCText.floorDiv(point.sentMs - origin, bucketMs), default: []].append(point.latenessMs) }
        var windows: [GeneratorWindow] = []
        var current: (start: Int64, end: Int64, values: [Int64])?
        func close() {
            guard let run = current else { return }
            let sorted = run.values.sorted()
            windows.append(
                GeneratorWindow(
                    label: "G\(windows.count + 1)",
                    startMs: run.start,
                    endMs: run.end,
                    polls: sorted.count,
                    latePolls: sorted.count { $0 > generatorLatenessBoundMs },
                    latenessP99Ms: NearestRank.percentile(99, ofSorted: sorted) ?? 0,
                    worstLatenessMs: sorted.last ?? 0
                )
            )
            current = nil
        }
        for index in buckets.keys.sorted() {
            let values = buckets[index] ?? []
            let sorted = values.sorted()
            let behind = (NearestRank.percentile(99, ofSorted: sorted) ?? 0) > generatorLatenessBoundMs
            let start = origin + index * bucketMs
            // Buckets without polls say nothing either way: a window runs on across them to the next bucket that did.
            if behind, let run = current {
                current = (run.start, start + bucketMs, run.values + values)
            } else if behind {
                close()
                current = (start, start + bucketMs, values)
            } else {
                close()
            }
        }
        close()
        return windows
    }

    /// The headline's first sentence when the emulator fell behind, else nil.
    var generatorSentence: String? {
        guard !generatorWindows.isEmpty else { return nil }
        let days =
            generatorWindows.first.map { UTCText.floorDiv($0.startMs, 86_400_000) }
            != generatorWindows.last.map { UTCText.floorDiv($0.endMs - 1, 86_400_000) }
        let spans = generatorWindows.prefix(3).map { "\($0.label) \(Self.clock($0.startMs, withDate: days))–\(Self.clock($0.endMs, withDate: days))" }
        let more = generatorWindows.count > 3 ? " and \(generatorWindows.count - 3) more" : ""
        let worst = generatorWindows.map(\.worstLatenessMs).max() ?? 0
        let p99 = generatorWindows.map(\.latenessP99Ms).max() ?? 0
        let count = generatorWindows.count
        return
            "The emulator fell behind its own schedule in \(count) window\(count == 1 ? "" : "s") (\(spans.joined(separator: ", "))\(more)): polls went out late by p99 \(NumberText.duration(Double(p99))) (worst \(NumberText.duration(Double(worst)))) against a bound of \(NumberText.duration(Double(Self.generatorLatenessBoundMs))), so the figures of those windows measure the emulator, not the backend."
    }
}
