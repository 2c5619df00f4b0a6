/// A whole number split over several parts (a fleet's loops, their connection pools).
package enum EvenSplit {
    /// Part `part`'s share of `total` split over `count`: the shares differ by at most one, the first parts
    /// take the remainder, and none is zero (a part always gets at least one).
    package static func share(of total: Int, part: Int, count: Int) -> Int {
        max(1, total / count + (part < total % count ? 1 : 0))
    }
}
