// Strings and numbers: the byte-level grammar, their limits, and their values.
extension JSONValueParser {
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, at most `maxNumberLength` characters.
    mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        if peek == UInt8(ascii: "0") {
            index += 1
        } else {
            try digits(start: start)
        }
        var integral = true
        if peek == UInt8(ascii: ".") {
            integral = false
            index += 1
            try digits(start: start)
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            integral = false
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            try digits(start: start)
        }
        let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        if integral, let value = Self.int64(text) {
            return .int(value)
        }
        let literal = String(decoding: text, as: UTF8.self)
        guard let value = Double(literal), value.isFinite else {
            // The wording of Foundation's reader, which answered this before.
            numberFailure = numberFailure ?? .syntax("Number \(literal) is not representable in Swift.")
            return .null
        }
        if numbers == .integralAsInt, value.rounded() == value, abs(value) < 0x1p63 { return .int(Int64(value)) }
        return .double(value)
    }

    /// One or more digits, keeping the literal that began at `start` within its limit.
    private mutating func digits(start: Int) throws(Failure) {
        let first = index
        while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            index += 1
            if index - start > limits.maxNumberLength {
                throw .limit(.maxNumberLength, value: limits.maxNumberLength, offset: start)
            }
        }
        guard index > first else {
            guard let byte = peek else { throw .syntax("Unexpected end of file at byte \(index)") }
            throw unexpected(byte, wanted: "a digit")
        }
    }

    /// The integer a validated integer literal spells, or nil when it does not fit.
    private static func int64(_ text: UnsafeRawBufferPointer) -> Int64? {
        var digits = text[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        var magnitude: UInt64 = 0
        for byte in digits {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
        }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// A string from its opening quote: escapes as RFC 8259 lists them, no control characters, well-formed UTF-8,
    /// at most `maxStringLength` bytes as written.
    mutating func string() throws(Failure) -> String {
        let start = index
        index += 1
        // Without escapes the string is the one run of bytes between the quotes. With them, runs and decoded escapes
        // gather as UTF-8 in `scratch`, which becomes the string once: appending to a `String` escape by escape
        // costs several times more.
        var run = index
        var escaped = false
        var pendingHigh: UInt32?
        while true {
            guard let byte = peek else { throw .syntax("Unexpected end of file in the string at byte \(start)") }
            // Escapes and multi-byte characters advance several bytes at once, so the closing quote checks too.
            let length = index - start - 1
            if length > limits.maxStringLength || (length == limits.maxStringLength && byte != UInt8(ascii: "\"")) {
                throw .limit(.maxStringLength, value: limits.maxStringLength, offset: start)
            }
            switch byte {
            case UInt8(ascii: "\""):
                let tail = UnsafeRawBufferPointer(rebasing: bytes[run..<index])
                index += 1
                guard escaped else { return String(decoding: tail, as: UTF8.self) }
                scratch.append(contentsOf: tail)
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                if !escaped {
                    escaped = true
                    scratch.removeAll(keepingCapacity: true)
                }
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<index]))
                try escape(pendingHigh: &pendingHigh)
                run = index
            case 0..<0x20:
                throw .syntax("Unescaped control character 0x\(String(byte, radix: 16)) in a string at byte \(index)")
            case 0x80...:
                try utf8Sequence(byte)
            default:
                index += 1
            }
        }
    }

    /// Decodes the escape at `index` onto `scratch`.
    private mutating func escape(pendingHigh: inout UInt32?) throws(Failure) {
        let at = index
        index += 1
        guard let byte = peek else { throw .syntax("Unexpected end of file in an escape at byte \(at)") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = peek.flatMap(Self.hexValue) else { throw .syntax("Invalid \\u escape at byte \(at)") }
                code = code << 4 | digit
                index += 1
            }
            if let scalar = scalar(code, pendingHigh: &pendingHigh) {
                UTF8.encode(scalar) { scratch.append($0) }
            }
        default:
            throw .syntax("Invalid escape at byte \(at)")
        }
    }

    /// The scalar a `\u` escape adds; nil for a high surrogate followed by a low-surrogate escape, whose pair's
    /// scalar comes with the low half. An unpaired half is remembered as the failure (in Foundation's
    /// wording) and stands as U+FFFD meanwhile.
    private mutating func scalar(_ code: UInt32, pendingHigh: inout UInt32?) -> Unicode.Scalar? {
        switch code {
        case 0xD800..<0xDC00:
            if lowSurrogateFollows() {
                pendingHigh = code
                return nil
            }
            let message =
                bytes.count - index < 2
                ? "Unexpected end of file during JSON parse."
                : "Unexpected end of file during string parse (expected low-surrogate code point but did not find one)."
            stringFailure = stringFailure ?? .syntax(message)
        case 0xDC00..<0xE000:
            if let high = pendingHigh {
                pendingHigh = nil
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))!
            }
            stringFailure =
                stringFailure ?? .syntax("Unable to convert hex escape sequence (no high character) to UTF8-encoded character.")
        default:
            return Unicode.Scalar(code)!
        }
        return "\u{FFFD}"
    }

    /// Whether the next six bytes are a `\u` escape of a low surrogate.
    private func lowSurrogateFollows() -> Bool {
        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return false }
        var code: UInt32 = 0
        for offset in 2..<6 {
            guard let digit = Self.hexValue(bytes[index + offset]) else { return false }
            code = code << 4 | digit
        }
        return (0xDC00..<0xE000).contains(code)
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// A multi-byte UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
    private mutating func utf8Sequence(_ lead: UInt8) throws(Failure) {
        let at = index
        // How many continuation bytes follow, and the narrower range the first one must be in.
        let (continuation, second): (Int, ClosedRange<UInt8>) =
            switch lead {
            case 0xC2...0xDF: (1, 0x80...0xBF)
            case 0xE0: (2, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (2, 0x80...0xBF)
            case 0xED: (2, 0x80...0x9F)
            case 0xF0: (3, 0x90...0xBF)
            case 0xF1...0xF3: (3, 0x80...0xBF)
            case 0xF4: (3, 0x80...0x8F)
            default: throw .syntax("Invalid UTF-8 at byte \(at)")
            }
        index += 1
        for position in 0..<continuation {
            guard let byte = peek, (position == 0 ? second : 0x80...0xBF).contains(byte) else {
                throw .syntax("Invalid UTF-8 at byte \(at)")
            }
            index += 1
        }
    }
}
