import RegcodeSupport

/// Limits on the shape of one request line, checked by ``JSONPreScanner`` before any parsing.
///
/// The line length alone does not bound the cost of parsing: a 1 KB line of 512 nested arrays took Foundation's
/// decoder about a second. Control requests are small, flat objects, so the defaults leave ample room for them.
public struct InputLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects; the request object itself is level 1. Default 32.
    public var maxDepth = 32
    /// The longest string, in bytes as written between its quotes (an escape counts as written). Default 64 KiB.
    public var maxStringLength = 64 << 10
    /// The longest number literal, in characters (sign, digits, point, exponent). Default 64.
    public var maxNumberLength = 64
    /// The most members in one object. Default 1024.
    public var maxObjectMembers = 1024
    /// The most elements in one array. Default 1024.
    public var maxArrayElements = 1024

    public init() {}
}

extension RPCError {
    /// The answer to a line that breaks one of the ``InputLimits`` (-32600, `id` null: the line is not parsed).
    static func inputLimitExceeded(_ limit: JSONPreScanner.Limit, value: Int, offset: Int) -> RPCError {
        let what =
            switch limit {
            case .maxDepth: "nesting deeper than \(value) levels"
            case .maxStringLength: "a string longer than \(describeByteCount(value))"
            case .maxNumberLength: "a number literal longer than \(value) characters"
            case .maxObjectMembers: "an object with more than \(value) members"
            case .maxArrayElements: "an array with more than \(value) elements"
            }
        return RPCError(
            code: -32600,
            message: "line refused unparsed: \(what) at byte \(offset) (input limit \(limit.rawValue))",
            data: ["limit": .int(Int64(value)), "inputLimit": .string(limit.rawValue)]
        )
    }
}
