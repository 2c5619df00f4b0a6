import RegcodeSupport

extension RPCError {
    /// The answer to a line that breaks one of the ``InputLimits`` (-32600, `id` null: the line is not parsed).
    static func inputLimitExceeded(_ limit: InputLimits.Limit, value: Int, offset: Int) -> RPCError {
        let what =
            switch limit {
            case .maxDepth: "nesting deeper than \(value) levels"
            case .maxStringLength: "a string longer than \(describeByteCount(value))"
            case .maxNumberLength: "a number literal longer than \(value) characters"
            case .maxObjectMembers: "an object with more than \(value) members"
            case .maxArrayElements: "an array with more than \(value) elements"
            case .maxValues: "more than \(value) values"
            }
        return RPCError(
            code: -32600,
            message: "line refused unparsed: \(what) at byte \(offset) (input limit \(limit.rawValue))",
            data: ["limit": .int(Int64(value)), "inputLimit": .string(limit.rawValue)]
        )
    }
}
