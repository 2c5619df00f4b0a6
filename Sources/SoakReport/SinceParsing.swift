import Foundation
import RegcodeSupport

/// Reads the start of a report window as people write it.
package enum ReportSince {
    /// Why a `--since` value was refused.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package var input: String
        package var description: String {
            "cannot read '\(input)' as a start time: use a duration back from now (30m, 2h, 7d, 1h30m), an ISO-8601 time (2026-11-21T10:00:00Z) or epoch milliseconds"
        }
    }

    /// The window start in epoch milliseconds.
    ///
    /// Accepts a duration back from `nowMs` made of number-unit pairs (`ms`, `s`, `m`, `h`, `d`,
    /// `w`; e.g. `30m`, `1h30m`, `7d`), an ISO-8601 date or date-time (`2026-11-21`,
    /// `2026-11-21T10:00:00Z`, with fractional seconds or an offset; without a zone it is UTC),
    /// or a plain integer of epoch milliseconds.
    package static func parse(_ input: String, nowMs: Int64) throws(ParseError) -> Int64 {
        let text = input.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw ParseError(input: input) }
        if text.allSatisfy(\.isASCIIDigit), let epochMs = Int64(text) { return epochMs }
        if let duration = DurationParser.milliseconds(text) { return nowMs - duration }
        if let instant = isoMs(text) { return instant }
        throw ParseError(input: input)
    }

    static func isoMs(_ text: String) -> Int64? {
        var candidate = text
        if candidate.count == 10 { candidate += "T00:00:00Z" }
        // A time without a zone designator is read as UTC rather than the host's zone.
        if let tIndex = candidate.firstIndex(where: { $0 == "T" || $0 == "t" || $0 == " " }) {
            let timePart = candidate[candidate.index(after: tIndex)...]
            if !timePart.contains(where: { $0 == "Z" || $0 == "z" || $0 == "+" || $0 == "-" }) { candidate += "Z" }
            candidate.replaceSubrange(tIndex...tIndex, with: "T")
        }
        let styles = [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true),
            Date.ISO8601FormatStyle(includingFractionalSeconds: false),
        ]
        for style in styles {
            if let date = try? style.parse(candidate) {
                return Int64((date.timeIntervalSince1970 * 1000).rounded())
            }
        }
        return nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
