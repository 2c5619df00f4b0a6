/// One threshold checked against a report.
package struct ThresholdResult: Sendable, Equatable {
    package var threshold: Threshold
    /// The figure, in the metric's unit; `nil` when there were no samples (or no such fleet).
    package var value: Double?
    package var passed: Bool
    /// Why it failed without a value: `no samples`, `no fleet 'x' in the report`.
    package var note: String?

    /// The value as the expression writes it: `0.9950`, `3470 ms`, `12`, `no samples`.
    package var valueText: String {
        guard let value else { return note ?? "no samples" }
        switch threshold.metric.kind {
        case .rate: return Self.rate(value)
        case .milliseconds: return "\(Int64(value.rounded())) ms"
        case .count: return "\(Int64(value))"
        }
    }

    static func rate(_ value: Double) -> String {
        let scaled = Int64((value * 10_000).rounded())
        let fraction = String(scaled % 10_000)
        return "\(scaled / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
    }
}

extension SoakReport {
    /// Each threshold with the report's figure and whether it holds, in the order given, after the default ones
    /// (``Threshold/defaults``) the list does not already set.
    package func check(_ thresholds: [Threshold]) -> [ThresholdResult] {
        Threshold.withDefaults(thresholds).map { threshold in
            var figures = fleet
            var troubleFigures = trouble.figures
            if let name = threshold.fleet {
                guard let report = fleets.first(where: { $0.fleet == name }) else {
                    let known = fleets.map(\.fleet).joined(separator: ", ")
                    return ThresholdResult(threshold: threshold, value: nil, passed: false, note: "no fleet '\(name)' in the report (\(known))")
                }
                figures = report.figures
                troubleFigures = report.trouble
            }
            guard let value = threshold.metric.value(figures: figures, trouble: troubleFigures, generatorWindows: generatorWindows) else {
                return ThresholdResult(threshold: threshold, value: nil, passed: false, note: "no samples")
            }
            return ThresholdResult(threshold: threshold, value: value, passed: threshold.comparison.holds(value, threshold.bound), note: nil)
        }
    }
}
