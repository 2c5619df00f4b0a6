import DeviceEvents
import RegcodeEngine

/// The words of the terminal's live status line and of the summary at exit, from the live figures.
enum ProgressLine {
    /// `20 devices: 12 polling, 8 authenticated · 4.0 polls/s · late p99 ≤ 16 ms · 429s 0/min · errors 0/min`.
    static func status(phases: [DevicePhase: Int], recent: LiveStats.Bucket, rateSeconds: Int, minute: LiveStats.Bucket) -> String {
        let devices = phases.values.reduce(0, +)
        let states = DevicePhase.allCases.compactMap { phase in phases[phase].flatMap { $0 > 0 ? "\($0) \(phase.rawValue)" : nil } }
        let rate = Double(recent.polls) / Double(max(1, rateSeconds))
        var parts = ["\(devices) device\(devices == 1 ? "" : "s")" + (states.isEmpty ? "" : ": " + states.joined(separator: ", "))]
        parts.append("\(fixed(rate)) polls/s")
        parts.append(recent.lateness.percentile(99).map { "late p99 ≤ \(milliseconds($0))" } ?? "late p99 -")
        parts.append("429s \(minute.throttled)/min")
        parts.append("errors \(minute.errors)/min")
        return parts.joined(separator: " · ")
    }

    /// `stopped after 2m 05s: 20 devices (20 authenticated); 412 polls, 0 late over 1 s; 429s 0; errors 0`.
    static func summary(elapsedMs: Int64, phases: [DevicePhase: Int], totals: LiveStats.Counters) -> String {
        let devices = phases.values.reduce(0, +)
        let states = DevicePhase.allCases.compactMap { phase in phases[phase].flatMap { $0 > 0 ? "\($0) \(phase.rawValue)" : nil } }
        let late = totals.buckets.reduce(0) { $0 + ($1.second >= 0 ? $1.late : 0) }
        return "stopped after \(elapsed(elapsedMs)): \(devices) device\(devices == 1 ? "" : "s")"
            + (states.isEmpty ? "" : " (\(states.joined(separator: ", ")))")
            + "; \(totals.polls) poll\(totals.polls == 1 ? "" : "s") (\(late) over 1 s late in the last minute); 429s \(totals.throttled); errors \(totals.errors)"
    }

    /// `9 s`, `2m 05s`, `1h 02m`.
    static func elapsed(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds + 500) / 1000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60)m \(two(seconds % 60))s" }
        return "\(seconds / 3600)h \(two(seconds % 3600 / 60))m"
    }

    private static func fixed(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func milliseconds(_ value: Int64) -> String {
        value >= 1000 ? "\(fixed(Double(value) / 1000)) s" : "\(value) ms"
    }
}
