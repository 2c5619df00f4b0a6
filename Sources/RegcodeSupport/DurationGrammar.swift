/// The one duration grammar of every flag, configuration key and report option.
///
/// A bare number is seconds (`5`, `2.5`); otherwise one or more number–unit pairs, units `ms`,
/// `s`, `m`, `h`, `d`, `w` (`500ms`, `10s`, `2m`, `1h30m`, `7d`). Case and surrounding blanks are
/// ignored. Negative, non-finite and out-of-range values (beyond ``maximum``) are refused with a
/// reason rather than trapping later in `Duration` or nanosecond arithmetic.
package enum DurationParser {
    static let unitMilliseconds: [Substring: Double] = [
        "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
    ]
    /// The longest duration accepted: one year. Intervals, back-offs and retention ages are scaled,
    /// doubled and converted to `Int64` nanoseconds on their way to timers; a year leaves a margin of
    /// over 250× before any of that overflows, and nothing the daemon times is longer.
    package static let maximum: Duration = .seconds(365 * 86_400)
    static let maximumMilliseconds = Double(maximum.milliseconds)

    /// Why a text is not an accepted duration.
    package enum Problem: Error, Equatable, CustomStringConvertible {
        /// Not in the grammar at all.
        case notADuration(String)
        case notFinite(String)
        case negative(String)
        case tooLong(String)

        package var description: String {
            switch self {
            case .notADuration(let text): "'\(text)' is not a duration (e.g. 5s, 500ms, 2m, 7d)"
            case .notFinite(let text): "'\(text)' is not a finite duration"
            case .negative(let text): "'\(text)' is negative; durations start at 0"
            case .tooLong(let text): "'\(text)' is longer than the maximum of \(DurationParser.format(DurationParser.maximum))"
            }
        }
    }

    package static func parse(_ text: String) -> Duration? {
        try? read(text)
    }

    /// The duration, or the reason `text` is refused: the form every configuration error reports.
    package static func read(_ text: String) throws(Problem) -> Duration {
        .milliseconds(try readMilliseconds(text))
    }

    /// The duration in whole milliseconds (rounded), or nil when `text` is not a duration.
    package static func milliseconds(_ text: String) -> Int64? {
        try? readMilliseconds(text)
    }

    /// The duration in whole milliseconds (rounded), or the reason `text` is refused.
    package static func readMilliseconds(_ text: String) throws(Problem) -> Int64 {
        var rest = Substring(text.trimmingBlanks().lowercased())
        guard !rest.isEmpty else { throw .notADuration(text) }
        if let seconds = Double(rest) {
            return try checked(seconds * 1000, text: text)
        }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { throw .notADuration(text) }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            guard let scale = unitMilliseconds[unit] else { throw .notADuration(text) }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        return try checked(total, text: text)
    }

    private static func checked(_ milliseconds: Double, text: String) throws(Problem) -> Int64 {
        guard !milliseconds.isNaN else { throw .notFinite(text) }
        guard milliseconds >= 0 else { throw .negative(text) }
        guard milliseconds.isFinite else { throw .notFinite(text) }
        guard milliseconds <= maximumMilliseconds else { throw .tooLong(text) }
        return Int64(milliseconds.rounded())
    }

    /// Renders a duration the way `parse` reads it back.
    package static func format(_ duration: Duration) -> String {
        let ms = duration.milliseconds
        if ms % 86_400_000 == 0 && ms > 0 { return "\(ms / 86_400_000)d" }
        if ms % 3_600_000 == 0 && ms > 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0 && ms > 0 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}

extension String {
    fileprivate func trimmingBlanks() -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return self[first...last]
    }
}
