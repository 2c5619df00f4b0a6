/// Orders names the way people count: digit runs compare by value, so `stb-2` < `stb-10`.
package enum NaturalOrder {
    /// Whether `a` sorts before `b`; equal-valued digit runs fall back to plain string order.
    package static func less(_ a: String, _ b: String) -> Bool {
        let left = Array(a.unicodeScalars)
        let right = Array(b.unicodeScalars)
        var i = 0
        var j = 0
        while i < left.count, j < right.count {
            if isDigit(left[i]), isDigit(right[j]) {
                let startI = i
                let startJ = j
                while i < left.count, isDigit(left[i]) { i += 1 }
                while j < right.count, isDigit(right[j]) { j += 1 }
                let numberA = String(String.UnicodeScalarView(left[startI..<i]))
                let numberB = String(String.UnicodeScalarView(right[startJ..<j]))
                // Compare by magnitude without parsing, so runs longer than Int64 still work.
                let trimmedA = numberA.drop { $0 == "0" }
                let trimmedB = numberB.drop { $0 == "0" }
                if trimmedA.count != trimmedB.count { return trimmedA.count < trimmedB.count }
                if trimmedA != trimmedB { return trimmedA < trimmedB }
            } else {
                if left[i] != right[j] { return left[i].value < right[j].value }
                i += 1
                j += 1
            }
        }
        if (left.count - i) != (right.count - j) { return (left.count - i) < (right.count - j) }
        return a < b
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }
}
