import NIOCore

/// Checks one line against the RFC 8259 grammar and the ``InputLimits`` in a single pass over its bytes, before
/// anything parses it.
///
/// Hand-written because Foundation's `JSONDecoder` has no depth, size or count limits to configure: it parses a
/// whole nesting bomb (about a second for 1 KB of `[`) before saying anything, and it lets some non-JSON through
/// (a NUL byte after a bare number). The scan builds nothing: it keeps one word per open container (its kind and
/// element count) in a stack-allocated buffer of `maxDepth` words, and stops at the first violation.
enum JSONPreScanner {
    /// Which of the ``InputLimits`` a line broke.
    enum Limit: String, Sendable {
        case maxDepth, maxStringLength, maxNumberLength, maxObjectMembers, maxArrayElements
    }

    enum Failure: Error, Equatable {
        /// Not JSON; the message names what was wrong and where.
        case syntax(String)
        /// JSON so far, but past a limit: `value` is the limit, `offset` where the scan stopped.
        case limit(Limit, value: Int, offset: Int)
    }

    /// Throws the first grammar or limit violation in `line`.
    static func scan(_ line: ByteBuffer, limits: InputLimits) throws(Failure) {
        let result = line.withUnsafeReadableBytes { bytes -> Failure? in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: max(limits.maxDepth, 1)) { stack -> Failure? in
                var scanner = Scanner(bytes: bytes, limits: limits, stack: stack)
                do throws(Failure) {
                    try scanner.run()
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let result { throw result }
    }
}

private struct Scanner {
    /// What may come next.
    private enum Expect {
        case value
        /// Right after `[`.
        case valueOrClose
        /// Right after `{`.
        case keyOrClose
        /// After a `,` in an object.
        case key
        case colon
        case commaOrClose
        /// After the top-level value: only whitespace.
        case end
    }

    let bytes: UnsafeRawBufferPointer
    let limits: InputLimits
    /// Per open container: element count shifted left once, low bit set for an object.
    let stack: UnsafeMutableBufferPointer<Int>
    private var depth = 0
    private var index = 0

    init(bytes: UnsafeRawBufferPointer, limits: InputLimits, stack: UnsafeMutableBufferPointer<Int>) {
        self.bytes = bytes
        self.limits = limits
        self.stack = stack
    }

    mutating func run() throws(JSONPreScanner.Failure) {
        var expect = Expect.value
        while true {
            self.skipWhitespace()
            guard self.index < self.bytes.count else {
                guard expect == .end else { throw .syntax("Unexpected end of file at byte \(self.index)") }
                return
            }
            let byte = self.bytes[self.index]
            switch expect {
            case .value, .valueOrClose:
                if byte == UInt8(ascii: "]"), expect == .valueOrClose {
                    expect = self.close()
                } else {
                    // A member's value was counted with its key.
                    if self.depth > 0, self.stack[self.depth - 1] & 1 == 0 { try self.countElement() }
                    expect = try self.value(byte)
                }
            case .keyOrClose, .key:
                if byte == UInt8(ascii: "}"), expect == .keyOrClose {
                    expect = self.close()
                } else if byte == UInt8(ascii: "\"") {
                    try self.countElement()
                    try self.string()
                    expect = .colon
                } else {
                    throw self.unexpected(byte, wanted: "a string key")
                }
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw self.unexpected(byte, wanted: "':'") }
                self.index += 1
                expect = .value
            case .commaOrClose:
                let inObject = self.stack[self.depth - 1] & 1 == 1
                if byte == UInt8(ascii: ",") {
                    self.index += 1
                    expect = inObject ? .key : .value
                } else if byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    expect = self.close()
                } else {
                    throw self.unexpected(byte, wanted: inObject ? "',' or '}'" : "',' or ']'")
                }
            case .end:
                throw self.unexpected(byte, wanted: "nothing after the value")
            }
        }
    }

    /// Scans the value starting with `byte`; what may follow it.
    private mutating func value(_ byte: UInt8) throws(JSONPreScanner.Failure) -> Expect {
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard self.depth < self.limits.maxDepth else { throw .limit(.maxDepth, value: self.limits.maxDepth, offset: self.index) }
            self.stack[self.depth] = byte == UInt8(ascii: "{") ? 1 : 0
            self.depth += 1
            self.index += 1
            return byte == UInt8(ascii: "{") ? .keyOrClose : .valueOrClose
        case UInt8(ascii: "\""):
            try self.string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try self.number()
        case UInt8(ascii: "t"):
            try self.literal("true")
        case UInt8(ascii: "f"):
            try self.literal("false")
        case UInt8(ascii: "n"):
            try self.literal("null")
        default:
            throw self.unexpected(byte, wanted: "a value")
        }
        return self.depth == 0 ? .end : .commaOrClose
    }

    /// Counts one more element of the innermost container against its limit.
    private mutating func countElement() throws(JSONPreScanner.Failure) {
        guard self.depth > 0 else { return }
        let entry = self.stack[self.depth - 1] + 2
        let inObject = entry & 1 == 1
        let limit = inObject ? self.limits.maxObjectMembers : self.limits.maxArrayElements
        guard entry >> 1 <= limit else {
            throw .limit(inObject ? .maxObjectMembers : .maxArrayElements, value: limit, offset: self.index)
        }
        self.stack[self.depth - 1] = entry
    }

    private mutating func close() -> Expect {
        self.index += 1
        self.depth -= 1
        return self.depth == 0 ? .end : .commaOrClose
    }

    private mutating func skipWhitespace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): self.index += 1
            default: return
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONPreScanner.Failure) {
        let start = self.index
        let count = word.utf8CodeUnitCount
        for offset in 0..<count {
            guard start + offset < self.bytes.count else { throw .syntax("Unexpected end of file at byte \(self.bytes.count)") }
            guard self.bytes[start + offset] == word.utf8Start[offset] else {
                throw .syntax("Invalid literal at byte \(start) (expected '\(word)')")
            }
        }
        self.index += count
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, at most `maxNumberLength` characters.
    private mutating func number() throws(JSONPreScanner.Failure) {
        let start = self.index
        if self.peek == UInt8(ascii: "-") { self.index += 1 }
        if self.peek == UInt8(ascii: "0") {
            self.index += 1
        } else {
            try self.digits(start: start)
        }
        if self.peek == UInt8(ascii: ".") {
            self.index += 1
            try self.digits(start: start)
        }
        if self.peek == UInt8(ascii: "e") || self.peek == UInt8(ascii: "E") {
            self.index += 1
            if self.peek == UInt8(ascii: "+") || self.peek == UInt8(ascii: "-") { self.index += 1 }
            try self.digits(start: start)
        }
    }

    /// One or more digits, keeping the literal that began at `start` within its limit.
    private mutating func digits(start: Int) throws(JSONPreScanner.Failure) {
        let first = self.index
        while let byte = self.peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            self.index += 1
            if self.index - start > self.limits.maxNumberLength {
                throw .limit(.maxNumberLength, value: self.limits.maxNumberLength, offset: start)
            }
        }
        guard self.index > first else {
            guard let byte = self.peek else { throw .syntax("Unexpected end of file at byte \(self.index)") }
            throw self.unexpected(byte, wanted: "a digit")
        }
    }

    /// A string from its opening quote: escapes as RFC 8259 lists them, no control characters, well-formed UTF-8.
    private mutating func string() throws(JSONPreScanner.Failure) {
        let start = self.index
        self.index += 1
        while true {
            guard let byte = self.peek else { throw .syntax("Unexpected end of file in the string at byte \(start)") }
            // Escapes and multi-byte characters advance several bytes at once, so the closing quote checks too.
            let length = self.index - start - 1
            if length > self.limits.maxStringLength || (length == self.limits.maxStringLength && byte != UInt8(ascii: "\"")) {
                throw .limit(.maxStringLength, value: self.limits.maxStringLength, offset: start)
            }
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                return
            case UInt8(ascii: "\\"):
                try self.escape()
            case 0..<0x20:
                throw .syntax("Unescaped control character 0x\(String(byte, radix: 16)) in a string at byte \(self.index)")
            case 0x80...:
                try self.utf8Sequence(byte)
            default:
                self.index += 1
            }
        }
    }

    private mutating func escape() throws(JSONPreScanner.Failure) {
        let at = self.index
        self.index += 1
        guard let byte = self.peek else { throw .syntax("Unexpected end of file in an escape at byte \(at)") }
        self.index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            for _ in 0..<4 {
                guard let digit = self.peek, digit.isHexDigit else { throw .syntax("Invalid \\u escape at byte \(at)") }
                self.index += 1
            }
        default:
            throw .syntax("Invalid escape at byte \(at)")
        }
    }

    /// A multi-byte UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
    private mutating func utf8Sequence(_ lead: UInt8) throws(JSONPreScanner.Failure) {
        let at = self.index
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
        self.index += 1
        for position in 0..<continuation {
            guard let byte = self.peek, (position == 0 ? second : 0x80...0xBF).contains(byte) else {
                throw .syntax("Invalid UTF-8 at byte \(at)")
            }
            self.index += 1
        }
    }

    private var peek: UInt8? {
        self.index < self.bytes.count ? self.bytes[self.index] : nil
    }

    private func unexpected(_ byte: UInt8, wanted: String) -> JSONPreScanner.Failure {
        let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return .syntax("Unexpected character \(shown) at byte \(self.index), expected \(wanted)")
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
