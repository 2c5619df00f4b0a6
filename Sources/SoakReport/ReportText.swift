import RegcodeSupport

extension JSONWriter {
    /// The report's optional figures: `null` when absent; doubles rounded to three decimals.
    mutating func optional(_ value: Int?) { if let value { int(Int64(value)) } else { null() } }
    mutating func optional(_ value: Int64?) { if let value { int(value) } else { null() } }
    mutating func optional(_ value: Double?) { if let value { raw(NumberText.json(value)) } else { null() } }

    /// One member of an object: its key, then its value.
    mutating func member(_ name: String, _ value: Int64) {
        key(name)
        int(value)
    }
    mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }
    mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }
    mutating func member(_ name: String, optional value: Int?) {
        key(name)
        optional(value)
    }
    mutating func member(_ name: String, optional value: Int64?) {
        key(name)
        optional(value)
    }
    mutating func member(_ name: String, optional value: Double?) {
        key(name)
        optional(value)
    }
}

/// Number formatting shared by the renderers, independent of the locale.
enum NumberText {
    /// Integral values without a fraction, others with up to three decimals; non-finite as null.
    static func json(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return fixed(value, maxDecimals: 3)
    }

    /// `value` rounded to at most `maxDecimals` decimals, trailing zeros dropped.
    static func fixed(_ value: Double, maxDecimals: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<maxDecimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9.0e15 else { return String(value) }
        let units = Int64(scaled)
        let whole = units / Int64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard maxDecimals > 0 else { return "\(sign)\(whole)" }
        var fraction = String(units % Int64(scale))
        fraction = String(repeating: "0", count: maxDecimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }

    /// A duration for people: `850 ms`, `4.2 ms`, `5.01 s`, `4m 05s`, `2h 07m`.
    static func duration(_ milliseconds: Double?) -> String {
        guard let milliseconds, milliseconds.isFinite else { return "-" }
        let magnitude = abs(milliseconds)
        let sign = milliseconds < 0 ? "-" : ""
        if magnitude < 10 && magnitude.rounded() != magnitude { return sign + fixed(magnitude, maxDecimals: 1) + " ms" }
        if magnitude < 1000 { return sign + fixed(magnitude.rounded(), maxDecimals: 0) + " ms" }
        if magnitude < 60_000 { return sign + fixed(magnitude / 1000, maxDecimals: 2) + " s" }
        let seconds = Int64((magnitude / 1000).rounded())
        if seconds < 3600 { return sign + "\(seconds / 60)m \(twoDigits(seconds % 60))s" }
        if seconds < 86_400 { return sign + "\(seconds / 3600)h \(twoDigits(seconds % 3600 / 60))m" }
        return sign + "\(seconds / 86_400)d \(twoDigits(seconds % 86_400 / 3600))h"
    }

    static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

/// UTC calendar text for epoch milliseconds, without Foundation's locale-dependent formatters.
enum UTCText {
    struct Parts {
        var year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64, millisecond: Int64
    }

    static func parts(_ epochMs: Int64) -> Parts {
        let days = floorDiv(epochMs, 86_400_000)
        let msOfDay = epochMs - days * 86_400_000
        // Days to civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return Parts(
            year: year,
            month: month,
            day: day,
            hour: msOfDay / 3_600_000,
            minute: msOfDay % 3_600_000 / 60_000,
            second: msOfDay % 60_000 / 1000,
            millisecond: msOfDay % 1000
        )
    }

    /// `2026-11-21T10:00:00.123Z`.
    static func iso(_ epochMs: Int64) -> String {
        let p = parts(epochMs)
        let ms = p.millisecond < 10 ? "00\(p.millisecond)" : p.millisecond < 100 ? "0\(p.millisecond)" : "\(p.millisecond)"
        return "\(date(p))T\(clock(p)).\(ms)Z"
    }

    /// `2026-11-21 10:00:00 UTC`.
    static func readable(_ epochMs: Int64) -> String {
        let p = parts(epochMs)
        return "\(date(p)) \(clock(p)) UTC"
    }

    static func date(_ p: Parts) -> String {
        "\(p.year)-\(NumberText.twoDigits(p.month))-\(NumberText.twoDigits(p.day))"
    }

    static func clock(_ p: Parts) -> String {
        "\(NumberText.twoDigits(p.hour)):\(NumberText.twoDigits(p.minute)):\(NumberText.twoDigits(p.second))"
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }
}
