import Foundation
import RegcodeSupport
import SoakReport

/// The table of `regcodectl devices`, from a `devices.list` result, as seen at `now`.
///
/// Times are relative to `now` (a countdown to the code's expiry, the age of the last poll), so the
/// table needs no time zone. Fields an older daemon does not send show `-`.
enum DevicesTable {
    static let header = ["DEVICE", "FLEET", "STATE", "CODE", "EXPIRES", "POLLS", "LAST POLL", "HTTP", "LAST OUTCOME"]
    /// Widest cell of each column but the last; the last gets what is left of ``lineWidth``.
    static let maximumWidths = [16, 12, 18, 10, 7, 6, 9, 4]
    /// Lines stay within a 120-column terminal without wrapping.
    static let lineWidth = 119

    static func render(_ result: JSONValue, nowMs: Int64) -> String {
        let devices = (result["devices"]?.arrayValue ?? []).sorted {
            NaturalOrder.less($0["device"]?.stringValue ?? "", $1["device"]?.stringValue ?? "")
        }
        let rows = devices.map { row($0, nowMs: nowMs) }
        var widths = header.indices.dropLast().map { column in
            min(maximumWidths[column], ([header] + rows).map { $0[column].count }.max() ?? 0)
        }
        let separators = 2 * (header.count - 1)
        widths.append(max(header.last!.count, lineWidth - separators - widths.reduce(0, +)))
        let fitted = rows.map { cells in cells.enumerated().map { truncate($1, to: widths[$0]) } }
        return TextTable.render(header: header, rows: fitted)
    }

    static func row(_ device: JSONValue, nowMs: Int64) -> [String] {
        let state = device["state"]?.stringValue ?? "-"
        let expires = device["expires"]?.intValue
        let codeExpired = expires.map { $0 <= nowMs } ?? false
        let outcome = device["lastOutcome"]
        return [
            device["device"]?.stringValue ?? "?",
            device["fleet"]?.stringValue ?? "-",
            displayedState(state, codeExpired: codeExpired, lastOutcomeKind: outcome?["kind"]?.stringValue),
            device["code"]?.stringValue ?? "-",
            expires.map { countdown($0 - nowMs) } ?? "-",
            device["polls"]?.intValue.map(String.init) ?? "-",
            device["lastPoll"]?.intValue.map { age(nowMs - $0) } ?? "-",
            device["lastHttpStatus"]?.intValue.map(String.init) ?? "-",
            outcome.flatMap(describeOutcome) ?? "-",
        ]
    }

    /// The daemon's state, except that a device whose code has run out is `expired`: the engine may
    /// not have noticed yet (still `polling`), or be back to `ready` with nothing to enter, and
    /// neither should read as if a code were waiting to be entered.
    static func displayedState(_ state: String, codeExpired: Bool, lastOutcomeKind: String?) -> String {
        switch state {
        case "polling" where codeExpired: "expired"
        case "ready" where codeExpired || lastOutcomeKind == "expired": "expired"
        default: state
        }
    }

    /// `text — why`, or just the text.
    static func describeOutcome(_ outcome: JSONValue) -> String? {
        guard let text = outcome["text"]?.stringValue ?? outcome["kind"]?.stringValue else { return nil }
        guard let why = outcome["why"]?.stringValue, !why.isEmpty else { return text }
        return "\(text) — \(why)"
    }

    /// `4m59s`, `1h02m`, `59s`; `expired` once nothing is left.
    static func countdown(_ remainingMs: Int64) -> String {
        guard remainingMs > 0 else { return "expired" }
        let seconds = remainingMs / 1000
        if seconds >= 86_400 { return "\(seconds / 86_400)d\(twoDigits(seconds % 86_400 / 3600))h" }
        if seconds >= 3600 { return "\(seconds / 3600)h\(twoDigits(seconds % 3600 / 60))m" }
        if seconds >= 60 { return "\(seconds / 60)m\(twoDigits(seconds % 60))s" }
        return "\(seconds)s"
    }

    /// `3s ago`, `4m ago`, `2h ago`, `3d ago`; a time slightly ahead of this clock counts as now.
    static func age(_ elapsedMs: Int64) -> String {
        let seconds = max(0, elapsedMs) / 1000
        if seconds >= 86_400 { return "\(seconds / 86_400)d ago" }
        if seconds >= 3600 { return "\(seconds / 3600)h ago" }
        if seconds >= 60 { return "\(seconds / 60)m ago" }
        return "\(seconds)s ago"
    }

    static func truncate(_ text: String, to width: Int) -> String {
        text.count > width ? String(text.prefix(max(0, width - 1))) + "…" : text
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

/// Times as regcodectl prints them: UTC, marked with `Z`.
enum UTCTime {
    /// `10:00:00.012Z` for epoch milliseconds.
    static func clock(epochMs: Int64) -> String {
        let dayMs = ((epochMs % 86_400_000) + 86_400_000) % 86_400_000
        let h = dayMs / 3_600_000
        let m = dayMs / 60000 % 60
        let s = dayMs / 1000 % 60
        let ms = dayMs % 1000
        return pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(ms, 3) + "Z"
    }

    /// `10:00:00Z`: the same without milliseconds.
    static func clockSeconds(epochMs: Int64) -> String {
        String(clock(epochMs: epochMs).prefix(8)) + "Z"
    }

    /// The time of day of an ISO 8601 timestamp, in UTC: `10:00:00.012Z`; the text itself if unreadable.
    static func clock(iso: String) -> String {
        if iso.hasSuffix("Z"), let t = iso.firstIndex(of: "T") {
            return String(iso[iso.index(after: t)...].dropLast().prefix(12)) + "Z"
        }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard let date = (try? style.parse(iso)) ?? (try? Date.ISO8601FormatStyle().parse(iso)) else { return iso }
        return clock(epochMs: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    private static func pad(_ value: Int64, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
