/// The one JSON reader of the project: a strict RFC 8259 parser straight into `JSONValue`, enforcing
/// ``InputLimits`` as it reads.
///
/// Written by hand because neither Foundation reader fits: `JSONDecoder` can only learn a value's type by
/// guessing and failing (each wrong guess throws and allocates a `DecodingError`), has no depth, size or count
/// limits (it parses a whole nesting bomb before saying anything), and `JSONSerialization` returns untyped
/// `NSNumber`s whose Bool/Int distinction differs between platforms. This one reads each byte once, keeps open
/// containers on a heap stack (no recursion, so nesting cannot exhaust the thread's stack), and stops at the
/// first grammar or limit violation, naming it and its byte offset.
///
/// Integers without fraction or exponent that fit `Int64` become `.int`; every other number `.double`.
/// Duplicate object keys keep the last value. Input must be valid UTF-8.
package struct JSONValueParser {
    /// The deepest nesting ``InputLimits/nestingOnly`` allows (Foundation's decoder stops at 512 too).
    package static let maximumDepth = 512

    /// How a number written with a fraction or an exponent is read.
    package enum Numbers: Sendable {
        /// As written: `1.0` is `.double(1)`. For backend answers, where the form can carry meaning.
        case asWritten
        /// JSON has one number type: any integral value that fits `Int64` is `.int` (`1.0`, `1e3`), as Foundation's
        /// decoder read it. For the control socket and the store, so that `10.0` written is `10` read back.
        case integralAsInt
    }

    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not JSON, or not representable as a ``JSONValue``; the message names what was wrong and, where it can,
        /// the byte offset.
        case syntax(String)
        /// JSON so far, but past a limit: `value` is the limit, `offset` where reading stopped.
        case limit(InputLimits.Limit, value: Int, offset: Int)

        package var description: String {
            switch self {
            case .syntax(let message): message
            case .limit(let limit, let value, let offset): "\(limit.rawValue) \(value) exceeded at byte \(offset)"
            }
        }
    }

    /// Parses a whole document, nesting at most ``maximumDepth`` deep; trailing bytes other than whitespace
    /// are an error.
    package static func parse(_ bytes: some Collection<UInt8>, numbers: Numbers = .asWritten) throws(Failure) -> JSONValue {
        try parse(bytes, limits: .nestingOnly, numbers: numbers)
    }

    /// Parses a whole document within `limits`. A grammar or limit violation is reported at the first byte
    /// that breaks it; a value JSON allows but `JSONValue` cannot hold (a number beyond `Double`, an unpaired
    /// surrogate escape) only once the whole document has been read, so that a later grammar error wins.
    package static func parse(_ bytes: some Collection<UInt8>, limits: InputLimits, numbers: Numbers = .asWritten) throws(Failure) -> JSONValue {
        var work = Work()
        return try parse(bytes, limits: limits, numbers: numbers, work: &work)
    }

    /// What one parse did, counted as it went: the bytes it read, the values it made and the values it moved into
    /// their containers. Each is at most the input's length, whatever its shape, which is what keeps the cost of
    /// a document linear in its size; tests and benchmarks read it to show that.
    package struct Work: Sendable, Equatable {
        /// Bytes read, up to where the parse stopped (each once).
        package var bytes = 0
        /// Values finished: scalars, arrays and objects.
        package var values = 0
        /// Values moved from the parser's stacks into the array or object that holds them (each once).
        package var moves = 0

        package init() {}

        /// Everything counted: at most three units per byte of input.
        package var total: Int { bytes + values + moves }
    }

    /// ``parse(_:limits:numbers:)``, also saying what it did, whether it succeeded or not.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        limits: InputLimits,
        numbers: Numbers = .asWritten,
        work: inout Work
    ) throws(Failure) -> JSONValue {
        // Typed throws do not pass through the buffer closures, hence the `Result`.
        var counted = Work()
        let result =
            bytes.withContiguousStorageIfAvailable { buffer in
                Result { () throws(Failure) -> JSONValue in try parseDocument(UnsafeRawBufferPointer(buffer), limits, numbers, &counted) }
            }
            ?? Array(bytes).withUnsafeBytes { buffer in
                Result { () throws(Failure) -> JSONValue in try parseDocument(buffer, limits, numbers, &counted) }
            }
        work = counted
        return try result.get()
    }

    private static func parseDocument(
        _ buffer: UnsafeRawBufferPointer,
        _ limits: InputLimits,
        _ numbers: Numbers,
        _ work: inout Work
    ) throws(Failure) -> JSONValue {
        var parser = JSONValueParser(bytes: buffer, limits: limits, numbers: numbers)
        defer {
            work = parser.work
            work.bytes = min(parser.index, buffer.count)
        }
        let value = try parser.run()
        if let unrepresentable = parser.stringFailure ?? parser.numberFailure { throw unrepresentable }
        return value
    }

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

    /// One open container. Its elements (and an object's keys) wait on the parser's shared stacks until it closes,
    /// so each value is moved once into a container built at its final size: no container grows while it is read,
    /// and an open container costs no allocation of its own.
    private struct Frame {
        var isObject: Bool
        /// Where its values begin on `values` (and its keys on `keys`).
        var valueStart: Int
        var keyStart: Int
        /// Elements or members so far, counted when each begins.
        var count = 0
    }

    let bytes: UnsafeRawBufferPointer
    let limits: InputLimits
    let numbers: Numbers
    var index = 0
    private var frames: [Frame] = []
    /// The finished values of every open container, innermost last.
    private var values: [JSONValue] = []
    /// The keys of the open objects' members, innermost last; a member's value is on `values`.
    private var keys: [String] = []
    /// A string with escapes as UTF-8 while it is read, reused from string to string.
    var scratch: [UInt8] = []
    /// Values begun so far, the one being read included: the count ``InputLimits/maxValues`` bounds.
    private var valuesBegun = 0
    private var result: JSONValue = .null
    /// What this parse has done so far.
    var work = Work()
    /// The first string JSON allows but Swift cannot hold (an unpaired surrogate): reported after the grammar,
    /// and before any number, as Foundation's reader did.
    var stringFailure: Failure?
    /// The first number beyond `Double`'s range.
    var numberFailure: Failure?

    private init(bytes: UnsafeRawBufferPointer, limits: InputLimits, numbers: Numbers) {
        self.bytes = bytes
        self.limits = limits
        self.numbers = numbers
        frames.reserveCapacity(min(limits.maxDepth, 16))
    }

    var peek: UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func run() throws(Failure) -> JSONValue {
        var expect = Expect.value
        while true {
            skipWhitespace()
            guard let byte = peek else {
                guard expect == .end else { throw .syntax("Unexpected end of file at byte \(index)") }
                return result
            }
            switch expect {
            case .value, .valueOrClose:
                if byte == UInt8(ascii: "]"), expect == .valueOrClose {
                    expect = close()
                } else {
                    // A member's value was counted with its key.
                    if let top = frames.last, !top.isObject { try countElement() }
                    expect = try value(byte)
                }
            case .keyOrClose, .key:
                if byte == UInt8(ascii: "}"), expect == .keyOrClose {
                    expect = close()
                } else if byte == UInt8(ascii: "\"") {
                    try countElement()
                    keys.append(try string())
                    expect = .colon
                } else {
                    throw unexpected(byte, wanted: "a string key")
                }
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw unexpected(byte, wanted: "':'") }
                index += 1
                expect = .value
            case .commaOrClose:
                expect = try commaOrClose(byte)
            case .end:
                throw unexpected(byte, wanted: "nothing after the value")
            }
        }
    }

    private mutating func commaOrClose(_ byte: UInt8) throws(Failure) -> Expect {
        let inObject = frames[frames.count - 1].isObject
        if byte == UInt8(ascii: ",") {
            index += 1
            return inObject ? .key : .value
        }
        guard byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
            throw unexpected(byte, wanted: inObject ? "',' or '}'" : "',' or ']'")
        }
        return close()
    }

    /// Reads the value starting with `byte`, or opens its container; what may follow.
    private mutating func value(_ byte: UInt8) throws(Failure) -> Expect {
        guard valuesBegun < limits.maxValues else { throw .limit(.maxValues, value: limits.maxValues, offset: index) }
        valuesBegun += 1
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard frames.count < limits.maxDepth else { throw .limit(.maxDepth, value: limits.maxDepth, offset: index) }
            frames.append(Frame(isObject: byte == UInt8(ascii: "{"), valueStart: values.count, keyStart: keys.count))
            index += 1
            return byte == UInt8(ascii: "{") ? .keyOrClose : .valueOrClose
        case UInt8(ascii: "\""):
            return complete(.string(try string()))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return complete(try number())
        case UInt8(ascii: "t"):
            try literal("true")
            return complete(.bool(true))
        case UInt8(ascii: "f"):
            try literal("false")
            return complete(.bool(false))
        case UInt8(ascii: "n"):
            try literal("null")
            return complete(.null)
        default:
            throw unexpected(byte, wanted: "a value")
        }
    }

    /// Hands a finished value to its container, or makes it the document's.
    private mutating func complete(_ value: JSONValue) -> Expect {
        work.values += 1
        guard !frames.isEmpty else {
            result = value
            return .end
        }
        values.append(value)
        return .commaOrClose
    }

    /// Builds the innermost container from its values (and keys), at its final size.
    private mutating func close() -> Expect {
        index += 1
        let frame = frames.removeLast()
        let count = values.count - frame.valueStart
        work.moves += count
        guard count > 0 else { return complete(frame.isObject ? .object([:]) : .array([])) }
        let container: JSONValue
        if frame.isObject {
            var members = [String: JSONValue](minimumCapacity: count)
            // In order, so that of duplicate keys the last value stays.
            for offset in 0..<count {
                members[keys[frame.keyStart + offset]] = values[frame.valueStart + offset]
            }
            keys.removeSubrange(frame.keyStart...)
            container = .object(members)
        } else {
            container = .array(Array(values[frame.valueStart...]))
        }
        values.removeSubrange(frame.valueStart...)
        return complete(container)
    }

    /// Counts one more element of the innermost container against its limit.
    private mutating func countElement() throws(Failure) {
        guard !frames.isEmpty else { return }
        let top = frames.count - 1
        let inObject = frames[top].isObject
        let limit = inObject ? limits.maxObjectMembers : limits.maxArrayElements
        guard frames[top].count < limit else {
            throw .limit(inObject ? .maxObjectMembers : .maxArrayElements, value: limit, offset: index)
        }
        frames[top].count += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let start = index
        let count = word.utf8CodeUnitCount
        for offset in 0..<count {
            guard start + offset < bytes.count else { throw .syntax("Unexpected end of file at byte \(bytes.count)") }
            guard bytes[start + offset] == word.utf8Start[offset] else {
                throw .syntax("Invalid literal at byte \(start) (expected '\(word)')")
            }
        }
        index += count
    }

    func unexpected(_ byte: UInt8, wanted: String) -> Failure {
        let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return .syntax("Unexpected character \(shown) at byte \(index), expected \(wanted)")
    }
}

extension JSONValue {
    /// Parses a JSON document, or nil when `bytes` are not one.
    package init?(parsing bytes: some Collection<UInt8>) {
        guard let value = try? JSONValueParser.parse(bytes) else { return nil }
        self = value
    }
}
