/// The one duration grammar of every flag, configuration key and report option.
///
/// A bare number is seconds (`5`, `2.5`); otherwise one or more number–unit pairs, units `ms`,
/// `s`, `m`, `h`, `d`, `w` (`500ms`, `10s`, `2m`, `1h30m`, `7d`). Case and surrounding blanks are
/// ignored. Negative, non-finite and out-of-range values (beyond ±2⁶³ ms) are refused rather than
/// trapping later in `Duration` arithmetic.
public enum DurationParser {
    static let unitMilliseconds: [Substring: Double] = [
        "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
    ]
    /// Sums above this are refused: it keeps `Duration` arithmetic on instants far from overflow.
    static let maximumMilliseconds = Double(Int64.max / 4)

    public static func parse(_ text: String) -> Duration? {
        milliseconds(text).map { .milliseconds($0) }
    }

    /// The duration in whole milliseconds (rounded), or nil when `text` is not a duration.
    public static func milliseconds(_ text: String) -> Int64? {
        var rest = Substring(text.trimmingBlanks().lowercased())
        guard !rest.isEmpty else { return nil }
        if let seconds = Double(rest) {
            return checked(seconds * 1000)
        }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            guard let scale = unitMilliseconds[unit] else { return nil }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        return checked(total)
    }

    private static func checked(_ milliseconds: Double) -> Int64? {
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds <= maximumMilliseconds else { return nil }
        return Int64(milliseconds.rounded())
    }

    /// Renders a duration the way `parse` reads it back.
    public static func format(_ duration: Duration) -> String {
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
