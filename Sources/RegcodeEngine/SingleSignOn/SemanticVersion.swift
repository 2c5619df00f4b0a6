/// A dotted version number (`1.10`, `3.7.0`, `17.4`), compared numerically component by component.
///
/// AccessEnabler and OS versions are compared with thresholds (`< 1.9`, `≥ 3.7.0`, `< 7`), and string
/// comparison gets `1.10 < 1.9` wrong. Missing components count as zero, so `1.10 == 1.10.0`.
package struct SemanticVersion: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible,
    ExpressibleByStringLiteral
{
    package var major: Int
    package var minor: Int
    package var patch: Int

    package init(_ major: Int, _ minor: Int = 0, _ patch: Int = 0) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Parses one to three non-negative integers separated by dots; nil for anything else.
    package init?(_ description: String) {
        let parts = description.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isWholeNumber }), let n = Int(part) else { return nil }
            numbers.append(n)
        }
        while numbers.count < 3 { numbers.append(0) }
        self.init(numbers[0], numbers[1], numbers[2])
    }

    /// For literals in code and tests; a malformed literal is a programming error.
    package init(stringLiteral value: String) {
        guard let version = SemanticVersion(value) else { preconditionFailure("not a version: \(value)") }
        self = version
    }

    /// Always three components, so a stored value reads back equal.
    package var description: String { "\(major).\(minor).\(patch)" }

    package static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// Encoded as its string (`"1.10.0"`), as configurations write it.
    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = SemanticVersion(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a version: \(text)"))
        }
        self = version
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
