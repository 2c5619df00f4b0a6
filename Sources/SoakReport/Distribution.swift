/// Nearest-rank percentiles.
///
/// For `n` values sorted ascending, the p-th percentile (0 < p ≤ 100) is the value at 1-based rank
/// `⌈p·n / 100⌉`: the smallest value such that at least p % of the values are less than or equal
/// to it. No interpolation, so every reported percentile is a value that actually occurred.
/// Examples: p50 of `[10, 20]` is 10 (rank ⌈1.0⌉ = 1); p95 of `[10, 20]` is 20 (rank ⌈1.9⌉ = 2);
/// p95 of `1…100` is 95; p99 of `1…100` is 99; any percentile of a single value is that value.
package enum NearestRank {
    /// The `percent`-th percentile of `sorted` (ascending), or `nil` when it is empty.
    /// - Precondition: `1 ≤ percent ≤ 100`.
    package static func percentile<Value>(_ percent: Int, ofSorted sorted: [Value]) -> Value? {
        precondition((1...100).contains(percent), "percentile must be between 1 and 100")
        guard !sorted.isEmpty else { return nil }
        // Integer ceiling: 0.95 * 100 in floating point is not exactly 95, which would shift a rank.
        let rank = (percent * sorted.count + 99) / 100
        return sorted[max(rank, 1) - 1]
    }
}

/// Summary of a set of measurements (milliseconds, or a plain count for polls per code).
///
/// Every figure is `nil` when there are no values; percentiles use ``NearestRank``.
package struct Distribution: Sendable, Equatable {
    package var count: Int
    package var min: Double?
    package var p50: Double?
    package var p95: Double?
    package var p99: Double?
    package var max: Double?
    package var mean: Double?

    /// The summary of `values`, in any order.
    package init(_ values: [Double]) {
        self.init(sorted: values.sorted())
    }

    /// The summary of `sorted`, which must be in ascending order.
    package init(sorted: [Double]) {
        count = sorted.count
        min = sorted.first
        max = sorted.last
        p50 = NearestRank.percentile(50, ofSorted: sorted)
        p95 = NearestRank.percentile(95, ofSorted: sorted)
        p99 = NearestRank.percentile(99, ofSorted: sorted)
        mean = sorted.isEmpty ? nil : sorted.reduce(0, +) / Double(sorted.count)
    }

    /// The summary of integer values (milliseconds, counts).
    package init<Values: Sequence>(integers values: Values) where Values.Element: BinaryInteger {
        self.init(values.map { Double($0) })
    }

    /// The empty summary.
    package static let empty = Distribution(sorted: [])
}
