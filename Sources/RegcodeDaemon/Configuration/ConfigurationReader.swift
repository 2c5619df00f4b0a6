import RegcodeEngine
import RegcodeSupport
import Yams

/// Reads the values of the configuration file's nodes; every refusal names the file, the key path and the reason.
struct ConfigurationReader: Sendable {
    let file: String?

    func fail(_ key: String, _ reason: String) -> ConfigurationError {
        ConfigurationError(file: file, key: key, reason: reason)
    }

    func mapping(_ node: Node, _ key: String) throws(ConfigurationError) -> [(String, Node)] {
        guard let mapping = node.mapping else { throw fail(key, "expected a mapping of keys to values") }
        var pairs: [(String, Node)] = []
        for (name, value) in mapping {
            guard let string = name.string else { throw fail(key, "keys must be strings") }
            pairs.append((string, value))
        }
        return pairs
    }

    func string(_ node: Node, _ key: String) throws(ConfigurationError) -> String {
        guard let scalar = node.scalar else { throw fail(key, "expected a single value") }
        return scalar.string
    }

    /// One value of a closed set, by its raw value (in any case when `ignoringCase`); a value outside it
    /// is refused with the whole set named.
    func choice<Value: RawRepresentable & CaseIterable>(
        _ node: Node,
        _ key: String,
        ignoringCase: Bool = false
    ) throws(ConfigurationError) -> Value where Value.RawValue == String {
        let text = try string(node, key)
        guard let value = Value(rawValue: ignoringCase ? text.lowercased() : text) else {
            throw fail(key, "'\(text)' is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    func optionalString(_ node: Node, _ key: String) throws(ConfigurationError) -> String? {
        if node.null != nil { return nil }
        return try string(node, key)
    }

    func int(_ node: Node, _ key: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let text = try string(node, key)
        guard let value = Int(text) else { throw fail(key, "'\(text)' is not a whole number") }
        guard range.contains(value) else { throw fail(key, "\(value) is outside \(ConfigurationValueKind.range(range))") }
        return value
    }

    /// A finite number in `range`; `note` follows the refusal of one outside it.
    func double(_ node: Node, _ key: String, range: ClosedRange<Double>, note: String? = nil) throws(ConfigurationError) -> Double {
        let text = try string(node, key)
        guard let value = Double(text), value.isFinite else { throw fail(key, "'\(text)' is not a number") }
        guard range.contains(value) else {
            let bounds = "\(ConfigurationValueKind.number(range.lowerBound))…\(ConfigurationValueKind.number(range.upperBound))"
            throw fail(key, "\(value) is outside \(bounds)" + (note.map { " (\($0))" } ?? ""))
        }
        return value
    }

    func bool(_ node: Node, _ key: String) throws(ConfigurationError) -> Bool {
        let text = try string(node, key).lowercased()
        switch text {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(key, "'\(text)' is not true or false")
        }
    }

    func duration(_ node: Node, _ key: String) throws(ConfigurationError) -> Duration {
        let text = try string(node, key)
        do {
            return try DurationParser.read(text)
        } catch {
            throw fail(key, error.description)
        }
    }

    func optionalDuration(_ node: Node, _ key: String) throws(ConfigurationError) -> Duration? {
        if node.null != nil { return nil }
        let text = try string(node, key)
        if ["off", "never", "none"].contains(text.lowercased()) { return nil }
        return try duration(node, key)
    }

    func version(_ node: Node, _ key: String) throws(ConfigurationError) -> SemanticVersion {
        let text = try string(node, key)
        guard let version = SemanticVersion(text) else { throw fail(key, "'\(text)' is not a version such as 1.10 or 3.7.0") }
        return version
    }

    /// The items of a list, each with its path (`key[i]`).
    func sequence(_ node: Node, _ key: String, expected: String) throws(ConfigurationError) -> [(String, Node)] {
        guard let sequence = node.sequence else { throw fail(key, expected) }
        return sequence.enumerated().map { ("\(key)[\($0.offset)]", $0.element) }
    }
}
