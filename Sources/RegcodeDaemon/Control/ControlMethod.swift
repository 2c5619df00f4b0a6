import ControlRPC
import RegcodeSupport

/// One method of the control surface: its name, its parameters, what it does and the code that answers it.
///
/// The entries of ``ControlMethods/table`` are the surface: the handler dispatches through them, checks every call's
/// parameters against them, and `rpc.discover` describes them (as the simulator's `APIRoute` values are both its routes
/// and its route classes).
struct ControlMethod: Sendable {
    /// What answers a call.
    enum Handler: Sendable {
        /// A call with one answer.
        case call(@Sendable (ControlMethodsHandler, RPCParams) async throws(RPCError) -> JSONValue)
        /// `subscribe`: an answer, then events on the same connection (the socket's transport streams them).
        case subscription(@Sendable (ControlMethodsHandler, RPCParams) async throws(RPCError) -> Subscription)
    }

    let name: String
    let summary: String
    let parameters: [ControlParameter]
    /// What the result holds, in words.
    let result: String
    /// The group `rpc.discover` files it under: `AccessEnabler`, or the prefix of its name (`devices`, `vsa`, …).
    let tag: String
    /// Answered while the daemon is still bringing its devices up; the others answer "starting" until then.
    let answeredWhileStarting: Bool
    let handler: Handler

    init(
        _ name: String,
        _ summary: String,
        parameters: [ControlParameter] = [],
        result: String,
        tag: String? = nil,
        answeredWhileStarting: Bool = false,
        _ call: @escaping @Sendable (ControlMethodsHandler, RPCParams) async throws(RPCError) -> JSONValue
    ) {
        self.init(
            name,
            summary,
            parameters: parameters,
            result: result,
            tag: tag,
            answeredWhileStarting: answeredWhileStarting,
            handler: .call(call)
        )
    }

    init(
        _ name: String,
        _ summary: String,
        parameters: [ControlParameter],
        result: String,
        tag: String? = nil,
        answeredWhileStarting: Bool = false,
        handler: Handler
    ) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.result = result
        self.tag = tag ?? String(name.split(separator: ".").first ?? "")
        self.answeredWhileStarting = answeredWhileStarting
        self.handler = handler
    }

    /// Checks a call's parameters against the method's: no member it does not know (so a typo is not silently
    /// ignored), every required one present, each of its type.
    func check(_ params: RPCParams) throws(RPCError) {
        try params.allowOnly(Set(parameters.map(\.name)))
        for parameter in parameters {
            try parameter.check(params.object[parameter.name])
        }
    }
}

/// A named parameter of a ``ControlMethod``.
struct ControlParameter: Sendable {
    let name: String
    let type: ParameterType
    let required: Bool
    let summary: String
    /// What a missing required member's message adds in parentheses, where a bare name would not say enough.
    let hint: String?

    init(_ name: String, _ type: ParameterType, required: Bool = false, _ summary: String, hint: String? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.summary = summary
        self.hint = hint
    }

    /// Every device-scoped method's `device`.
    static let device = ControlParameter("device", .string, required: true, "Device name, e.g. stb-1.")
    /// The app of a device that hosts several.
    static let app = ControlParameter("app", .string, "App of a device that hosts several (default: its first app).")

    /// Answers -32602 naming the member when `value` (nil: absent) is not what the parameter takes. An optional
    /// member may be null, as if absent.
    func check(_ value: JSONValue?) throws(RPCError) {
        guard let value else {
            guard required else { return }
            throw .invalidParams("missing '\(name)'" + (hint.map { " (\($0))" } ?? ""), data: ["member": .string(name)])
        }
        if value == .null, !required || type == .nullableString { return }
        switch type {
        case .string, .nullableString:
            guard let string = value.stringValue, !string.isEmpty else {
                let orNull = required && type == .string ? "" : " or null"
                throw mistyped("a non-empty string\(orNull)")
            }
        case .integer:
            guard value.intValue != nil else { throw mistyped("an integer") }
        case .boolean:
            guard value.boolValue != nil else { throw mistyped("a boolean") }
        case .object:
            guard value.objectValue != nil else { throw mistyped("an object") }
        case .stringMap:
            guard let map = value.objectValue else { throw mistyped("an object of strings") }
            if let (key, _) = map.sorted(by: { $0.key < $1.key }).first(where: { $0.value.stringValue == nil }) {
                throw .invalidParams("'\(name).\(key)' must be a string", data: ["member": .string("\(name).\(key)")])
            }
        case .strings:
            guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else { throw mistyped("an array of strings") }
        }
    }

    private func mistyped(_ what: String) -> RPCError {
        .invalidParams("'\(name)' must be \(what)", data: ["member": .string(name)])
    }
}

/// A parameter's JSON type, as calls are checked against it and `rpc.discover` describes it.
enum ParameterType: Sendable, Equatable {
    /// A non-empty string.
    case string
    /// A non-empty string, or null as a value of its own (cancel, clear).
    case nullableString
    case integer
    case boolean
    case object
    /// An object whose members are strings.
    case stringMap
    /// An array of strings.
    case strings

    /// Its JSON Schema.
    var schema: JSONValue {
        switch self {
        case .string: ["type": "string"]
        case .nullableString: ["type": ["string", "null"]]
        case .integer: ["type": "integer"]
        case .boolean: ["type": "boolean"]
        case .object: ["type": "object"]
        case .stringMap: ["type": "object", "additionalProperties": ["type": "string"]]
        case .strings: ["type": "array", "items": ["type": "string"]]
        }
    }
}
