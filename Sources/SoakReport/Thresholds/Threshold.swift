import Foundation
import RegcodeSupport

/// A pass/fail bound on one figure of a soak, written as k6 writes its thresholds:
/// `login_success_rate>=0.99`, `poll_lateness_p99<50ms`, `http_429_rate<1%`, `onboarding_failures==0`, and for
/// one configured fleet `http_5xx_rate{fleet:stb}<0.001`.
package struct Threshold: Sendable, Equatable, CustomStringConvertible {
    package enum Comparison: String, Sendable, CaseIterable {
        // Two-character operators first: `<=` must not read as `<` followed by `=0.5`.
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case greater = ">"

        func holds(_ value: Double, _ bound: Double) -> Bool {
            switch self {
            case .lessOrEqual: value <= bound
            case .greaterOrEqual: value >= bound
            case .equal: value == bound
            case .notEqual: value != bound
            case .less: value < bound
            case .greater: value > bound
            }
        }
    }

    package var metric: ThresholdMetric
    /// The configured fleet it applies to; `nil` for the whole run.
    package var fleet: String?
    package var comparison: Comparison
    /// In the metric's unit: a fraction, milliseconds or a count.
    package var bound: Double
    /// The expression as written.
    package var description: String

    package init(metric: ThresholdMetric, fleet: String? = nil, comparison: Comparison, bound: Double, description: String) {
        self.metric = metric
        self.fleet = fleet
        self.comparison = comparison
        self.bound = bound
        self.description = description
    }

    /// Why an expression could not be read; the message names the expression and what was expected.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// Reads one expression (spaces around the parts are allowed).
    package init(parsing text: String) throws(ParseError) {
        let expression = text.trimmingCharacters(in: .whitespaces)
        func fail(_ why: String) -> ParseError { ParseError(description: "threshold '\(expression)': \(why)") }
        guard let (operatorRange, comparison) = Self.findComparison(in: expression) else {
            throw fail(
                "expected METRIC OP VALUE with OP one of \(Comparison.allCases.map(\.rawValue).joined(separator: " ")), e.g. poll_lateness_p99<50ms"
            )
        }
        var left = expression[..<operatorRange.lowerBound].trimmingCharacters(in: .whitespaces)
        let right = expression[operatorRange.upperBound...].trimmingCharacters(in: .whitespaces)
        var fleet: String?
        if let brace = left.firstIndex(of: "{") {
            guard left.hasSuffix("}") else { throw fail("a fleet is written {fleet:NAME}") }
            let selector = left[left.index(after: brace)..<left.index(before: left.endIndex)]
            guard selector.hasPrefix("fleet:"), selector.count > "fleet:".count else { throw fail("a fleet is written {fleet:NAME}") }
            fleet = String(selector.dropFirst("fleet:".count))
            left = String(left[..<brace])
        }
        guard let metric = ThresholdMetric(rawValue: left) else {
            throw fail("unknown metric '\(left)'; known: \(ThresholdMetric.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard !right.isEmpty else { throw fail("no value after \(comparison.rawValue)") }
        let bound: Double
        switch metric.kind {
        case .rate:
            if right.hasSuffix("%") {
                guard let percent = Double(right.dropLast()) else { throw fail("'\(right)' is not a percentage") }
                bound = percent / 100
            } else {
                guard let fraction = Double(right) else { throw fail("'\(right)' is not a fraction (0.99) or a percentage (99%)") }
                bound = fraction
            }
        case .count:
            guard let count = Int(right), count >= 0 else { throw fail("'\(right)' is not a count") }
            bound = Double(count)
        case .milliseconds:
            // A bare number would read as seconds in every other duration here but as milliseconds in k6: a unit
            // removes the doubt.
            guard Double(right) == nil else { throw fail("give '\(right)' a unit: \(right)ms or \(right)s") }
            guard let milliseconds = DurationParser.milliseconds(right) else { throw fail("'\(right)' is not a duration (50ms, 2s, 1m)") }
            bound = Double(milliseconds)
        }
        self.init(metric: metric, fleet: fleet, comparison: comparison, bound: bound, description: expression)
    }

    private static func findComparison(in text: String) -> (Range<String.Index>, Comparison)? {
        for comparison in Comparison.allCases {
            if let range = text.range(of: comparison.rawValue) { return (range, comparison) }
        }
        return nil
    }

    /// On in every check: a run whose emulator fell behind its own schedule never passes, whatever its other
    /// figures (they measured the emulator). A threshold of the caller's on the same metric replaces it.
    ///
    /// `early_polls_after_slow_down==0` is deliberately not one of them, though it holds for every Adobe soak (0 by
    /// construction) and for every well-behaved OAuth device: the poll log cannot tell a device that was told to
    /// ignore `slow_down` (`ignore-slow-down`, run to see how a server enforces it) from a faulty one, so as a default
    /// it would fail exactly the soaks built to exercise that, and every Adobe verdict would carry a line that can never
    /// fail. A soak of well-behaved OAuth devices sets it: `--threshold early_polls_after_slow_down==0`.
    package static let defaults: [Threshold] = [
        Threshold(metric: .generatorBehindWindows, comparison: .equal, bound: 0, description: "generator_behind_windows==0")
    ]

    /// `thresholds` after the defaults on metrics they do not set (overall).
    package static func withDefaults(_ thresholds: [Threshold]) -> [Threshold] {
        defaults.filter { fallback in !thresholds.contains { $0.metric == fallback.metric && $0.fleet == nil } } + thresholds
    }
}
