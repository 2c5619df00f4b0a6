import RegcodeSupport
import Yams

/// How a configuration value is written: what the reader accepts and what the reference says it takes.
enum ConfigurationValueKind: Sendable {
    case string
    /// A string, or null for none.
    case optionalString
    case int(ClosedRange<Int>)
    /// A whole number in the range, or null for none.
    case optionalInt(ClosedRange<Int>)
    case double(ClosedRange<Double>)
    case bool
    /// A duration (`5s`, `500ms`, `2h`), with its bound in words when it has one.
    case duration(bound: String?)
    /// A duration, or `off` (`never`, `none`, null) for none.
    case optionalDuration
    /// One of a closed set.
    case choice([String])
    /// A grammar of its own, in words (`HOST:PORT`, `K/N`, a version).
    case text(String)
    /// A list; the words say of what.
    case list(String)
    /// A section of keys of its own.
    case mapping
    /// No longer read; the summary names what replaced it.
    case refused

    /// The type column of the reference.
    var typeName: String {
        switch self {
        case .string: "string"
        case .optionalString: "string or null"
        case .int: "integer"
        case .optionalInt: "integer or null"
        case .double: "number"
        case .bool: "boolean"
        case .duration: "duration"
        case .optionalDuration: "duration or off"
        case .choice: "choice"
        case .text(let words): words
        case .list(let words): "list of \(words)"
        case .mapping: "mapping"
        case .refused: "refused"
        }
    }

    /// The range or choices column of the reference.
    var allowed: String {
        switch self {
        case .int(let range), .optionalInt(let range): Self.range(range)
        case .double(let range): "\(Self.number(range.lowerBound))…\(Self.number(range.upperBound))"
        case .duration(let bound): bound ?? ""
        case .choice(let values): values.joined(separator: ", ")
        default: ""
        }
    }

    static func range(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)…\(range.upperBound)" }

    /// A number as the messages write it: `0`, not `0.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// One key of the configuration file: where it is, what it takes, its default, what it means and how it is applied.
///
/// The reader walks these rows (an unknown key is one no row names), and the generated reference
/// (`docs/reference/configuration.md`) lists them, so the two cannot drift.
struct ConfigurationKey<Target>: Sendable {
    /// Applies a key's value at `path` (its key path in messages) to the value being configured.
    typealias Read = @Sendable (inout Target, Node, _ path: String, ConfigurationReader) throws(ConfigurationError) -> Void
    /// The sections a key opens, described from `Target`'s default and the key's path.
    typealias Describe = @Sendable (Target, _ path: String) -> [ConfigurationReference.Section]

    let name: String
    /// Other spellings read the same (`honor_throttle`).
    var aliases: [String] = []
    let kind: ConfigurationValueKind
    let summary: String
    /// Read in `fleets[]` only, not in `defaults` (a fleet's own name and size).
    var fleetsOnly = false
    /// The default, rendered from the default value.
    let defaultValue: @Sendable (Target) -> String
    let read: Read
    /// The section the key opens, for the reference; nil for a plain value.
    var describe: Describe?

    /// Every spelling the reader accepts.
    var spellings: [String] { [name] + aliases }
}

/// The rows of one section and the walk over them.
extension ConfigurationReader {
    /// Applies each key of `pairs` through its row, in the file's order; a key no row names is refused.
    func apply<Target>(
        _ rows: [ConfigurationKey<Target>],
        _ pairs: [(String, Node)],
        prefix: String,
        to target: inout Target,
        inFleets: Bool = true
    ) throws(ConfigurationError) {
        for (key, value) in pairs {
            let path = prefix.isEmpty ? key : "\(prefix).\(key)"
            guard let row = rows.first(where: { $0.spellings.contains(key) && (inFleets || !$0.fleetsOnly) }) else {
                throw fail(path, "unknown key")
            }
            try row.read(&target, value, path, self)
        }
    }

    /// The mapping at `node` applied through `rows`.
    func apply<Target>(_ rows: [ConfigurationKey<Target>], _ node: Node, prefix: String, to target: inout Target) throws(ConfigurationError) {
        try apply(rows, try mapping(node, prefix), prefix: prefix, to: &target)
    }
}

/// The common shapes of a row: a value read by its kind and written at a key path, its default rendered from there.
extension ConfigurationKey {
    /// A row whose value is read and rendered by its own closures.
    static func custom(
        _ name: String,
        _ kind: ConfigurationValueKind,
        _ summary: String,
        default defaultValue: @escaping @Sendable (Target) -> String,
        read: @escaping Read
    ) -> Self {
        ConfigurationKey(name: name, kind: kind, summary: summary, defaultValue: defaultValue, read: read)
    }

    static func string(_ name: String, _ at: any WritableKeyPath<Target, String> & Sendable, _ summary: String) -> Self {
        custom(
            name,
            .string,
            summary,
            default: { $0[keyPath: at] },
            read: { target, node, path, reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.string(node, path)
            }
        )
    }

    static func optionalString(
        _ name: String,
        _ at: any WritableKeyPath<Target, String?> & Sendable,
        _ summary: String,
        none: String = "none"
    ) -> Self {
        custom(
            name,
            .optionalString,
            summary,
            default: { $0[keyPath: at] ?? none },
            read: { target, node, path, reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.optionalString(node, path)
            }
        )
    }

    static func int(_ name: String, _ at: any WritableKeyPath<Target, Int> & Sendable, _ range: ClosedRange<Int>, _ summary: String) -> Self {
        custom(
            name,
            .int(range),
            summary,
            default: { String($0[keyPath: at]) },
            read: { target, node, path, reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.int(node, path, range: range)
            }
        )
    }

    /// A whole number written to an optional (nil: the `none` of the default's words).
    static func int(
        _ name: String,
        _ at: any WritableKeyPath<Target, Int?> & Sendable,
        _ range: ClosedRange<Int>,
        _ summary: String,
        none: String
    ) -> Self {
        custom(
            name,
            .int(range),
            summary,
            default: { $0[keyPath: at].map(String.init) ?? none },
            read: {
                target,
                node,
                path,
                reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.int(node, path, range: range)
            }
        )
    }

    static func bool(_ name: String, _ at: any WritableKeyPath<Target, Bool> & Sendable, _ summary: String) -> Self {
        custom(
            name,
            .bool,
            summary,
            default: { String($0[keyPath: at]) },
            read: { target, node, path, reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.bool(node, path)
            }
        )
    }

    static func duration(_ name: String, _ at: any WritableKeyPath<Target, Duration> & Sendable, _ summary: String) -> Self {
        custom(
            name,
            .duration(bound: nil),
            summary,
            default: { DurationParser.format($0[keyPath: at]) },
            read: {
                target,
                node,
                path,
                reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.duration(node, path)
            }
        )
    }

    static func optionalDuration(
        _ name: String,
        _ at: any WritableKeyPath<Target, Duration?> & Sendable,
        _ summary: String,
        none: String = "off"
    ) -> Self {
        custom(
            name,
            .optionalDuration,
            summary,
            default: { $0[keyPath: at].map(DurationParser.format) ?? none },
            read: {
                target,
                node,
                path,
                reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.optionalDuration(node, path)
            }
        )
    }

    /// One value of a `CaseIterable` enum, by its raw value; refused with every choice named.
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ name: String,
        _ at: any WritableKeyPath<Target, Value> & Sendable,
        _ summary: String,
        ignoringCase: Bool = false
    ) -> Self where Value.RawValue == String {
        custom(
            name,
            .choice(Value.allCases.map(\.rawValue)),
            summary,
            default: { $0[keyPath: at].rawValue },
            read: {
                target,
                node,
                path,
                reader throws(ConfigurationError) in
                target[keyPath: at] = try reader.choice(node, path, ignoringCase: ignoringCase)
            }
        )
    }

    /// A section of keys of its own, applied to the value at `at` and described from its default there.
    static func section<Child>(
        _ name: String,
        _ summary: String,
        _ rows: [ConfigurationKey<Child>],
        at: any WritableKeyPath<Target, Child> & Sendable
    ) -> Self {
        var row = custom(
            name,
            .mapping,
            summary,
            default: { _ in "" },
            read: { target, node, path, reader throws(ConfigurationError) in
                try reader.apply(rows, node, prefix: path, to: &target[keyPath: at])
            }
        )
        row.describe = { target, path in ConfigurationReference.sections(path, summary, rows, defaults: target[keyPath: at]) }
        return row
    }

    /// This row, opening the section of `rows` described from `defaults` (a section the key assembles itself).
    func opening<Child: Sendable>(_ rows: [ConfigurationKey<Child>], defaults: Child, path: String? = nil) -> Self {
        var row = self
        let summary = summary
        row.describe = { _, keyPath in ConfigurationReference.sections(path ?? keyPath, summary, rows, defaults: defaults) }
        return row
    }

    /// This row under other spellings too.
    func alias(_ names: String...) -> Self {
        var row = self
        row.aliases = names
        return row
    }

    /// This row read in `fleets[]` only.
    var onlyInFleets: Self {
        var row = self
        row.fleetsOnly = true
        return row
    }
}
