/// Limits on the shape of one JSON document, enforced by ``JSONValueParser`` while it reads.
///
/// The byte length alone does not bound the cost of parsing: a 1 KB line of 512 nested arrays took Foundation's
/// decoder about a second. Control requests are small, flat objects, so the defaults leave ample room for them.
package struct InputLimits: Sendable, Hashable {
    /// Which limit a document broke; the raw value is the property's name, as error answers quote it.
    package enum Limit: String, Sendable {
        case maxDepth, maxStringLength, maxNumberLength, maxObjectMembers, maxArrayElements, maxValues
    }

    /// The deepest nesting of arrays and objects; the outermost container is level 1. Default 32.
    package var maxDepth = 32
    /// The longest string, in bytes as written between its quotes (an escape counts as written). Default 64 KiB.
    package var maxStringLength = 64 << 10
    /// The longest number literal, in characters (sign, digits, point, exponent). Default 64.
    package var maxNumberLength = 64
    /// The most members in one object. Default 1024.
    package var maxObjectMembers = 1024
    /// The most elements in one array. Default 1024.
    package var maxArrayElements = 1024
    /// The most values in one document: scalars, arrays and objects, the document itself included (an object's
    /// keys are not counted). Default 16,384.
    ///
    /// This is what keeps the cost of a document within the line limit linear with a small constant: the depth and
    /// per-container limits alone admit a 1 MB line of half a million nested arrays, each its own allocation.
    package var maxValues = 16 << 10

    package init() {}

    /// Only the nesting bounded (at ``JSONValueParser/maximumDepth``): for documents from a trusted peer, where
    /// size is bounded elsewhere (a backend answer, a file of ours).
    package static let nestingOnly: InputLimits = {
        var limits = InputLimits()
        limits.maxDepth = JSONValueParser.maximumDepth
        limits.maxStringLength = .max
        limits.maxNumberLength = .max
        limits.maxObjectMembers = .max
        limits.maxArrayElements = .max
        limits.maxValues = .max
        return limits
    }()
}
