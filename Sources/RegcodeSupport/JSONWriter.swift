/// The one JSON encoder of the project: deterministic text for the socket, the database, the CLI
/// and reports.
///
/// Written by hand rather than with `JSONEncoder` because every consumer needs byte-for-byte stable
/// output (object keys of a ``JSONValue`` sorted by their UTF-8 bytes, no escaped slashes, integers
/// never printed as doubles), some need members in the order they were written (reports), and the
/// event hot path should not go through `Data` and `Encodable` boxing.
package struct JSONWriter: Sendable {
    package enum Layout: Sendable {
        case compact
        /// Pretty-printed with this many spaces per level.
        case indented(Int)
    }

    /// The text written so far.
    package private(set) var text: String
    private let indent: Int?
    /// Elements written in each open container, innermost last.
    private var counts: [Int] = []
    /// A key was just written: the next value completes the member.
    private var afterKey = false

    package init(layout: Layout = .compact, capacity: Int = 256) {
        text = ""
        text.reserveCapacity(capacity)
        switch layout {
        case .compact: indent = nil
        case .indented(let spaces): indent = spaces
        }
    }

    /// `value` as compact JSON.
    package static func text(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.value(value)
        return writer.text
    }

    // MARK: Values

    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let string): self.string(string)
        case .array(let elements):
            array { writer in
                for element in elements { writer.value(element) }
            }
        case .object(let members):
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            object { writer in
                for key in keys {
                    writer.key(key)
                    writer.value(members[key]!)
                }
            }
        }
    }

    package mutating func null() { raw("null") }
    package mutating func bool(_ flag: Bool) { raw(flag ? "true" : "false") }
    package mutating func int(_ number: Int64) { raw(String(number)) }

    /// JSON has no NaN or infinity: they are written as null, as JavaScript's `JSON.stringify` does.
    package mutating func double(_ number: Double) {
        raw(number.isFinite ? number.description : "null")
    }

    /// A value already rendered as JSON (e.g. a number with its own rounding).
    package mutating func raw(_ json: String) {
        beginValue()
        text += json
    }

    package mutating func string(_ string: String) {
        beginValue()
        Self.quote(string, into: &text)
    }

    // MARK: Containers, members in the order written

    package mutating func array(_ body: (inout JSONWriter) -> Void) {
        open("[")
        body(&self)
        close("]")
    }

    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        open("{")
        body(&self)
        close("}")
    }

    /// Starts an object member; the next value written is its value.
    package mutating func key(_ name: String) {
        beginElement()
        Self.quote(name, into: &text)
        text += indent == nil ? ":" : ": "
        afterKey = true
    }

    // MARK: Layout

    private mutating func open(_ bracket: String) {
        beginValue()
        text += bracket
        counts.append(0)
    }

    private mutating func close(_ bracket: String) {
        let count = counts.removeLast()
        if let indent, count > 0 { newline(indent * counts.count) }
        text += bracket
    }

    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else if !counts.isEmpty {
            beginElement()
        }
    }

    private mutating func beginElement() {
        if counts[counts.count - 1] > 0 { text += "," }
        counts[counts.count - 1] += 1
        if let indent { newline(indent * counts.count) }
    }

    private mutating func newline(_ spaces: Int) {
        text += "\n"
        text += String(repeating: " ", count: spaces)
    }

    // MARK: Strings

    private static func quote(_ string: String, into text: inout String) {
        text += "\""
        guard string.utf8.contains(where: needsEscape) else {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case _ where scalar.value < 0x20:
                text += "\\u00"
                text.unicodeScalars.append(hexDigits[Int(scalar.value >> 4)])
                text.unicodeScalars.append(hexDigits[Int(scalar.value & 0x0F)])
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    private static let hexDigits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
