import AccessEnablerAPI
import RegcodeSupport

/// `rpc.discover`: the table as an OpenRPC document (so clients can be generated), as varlink's introspection does.
extension ControlMethodTable {
    /// The events a subscription carries, by name.
    static let events: [(name: String, summary: String)] =
        Callback.allCases.map { ($0.rawValue, "AccessEnabler callback \($0.rawValue)") } + [
            ("sso.tokenShared", "Single sign-on: an app used a token another app stored."),
            ("sso.tokenIgnored", "Single sign-on: a stored token was ignored (bound to another device id or client)."),
            ("sso.tokenWiped", "Single sign-on: the storage sanitizer wiped tokens."),
            ("queue.callRefused", "A call refused because the device already had as many calls waiting as its bound allows."),
        ]

    /// The errors every method may answer, by OpenRPC name.
    static let errors: [(name: String, code: Int64, message: String)] = [
        ("ParseError", -32700, "parse error"), ("InvalidRequest", -32600, "invalid request"),
        ("MethodNotFound", -32601, "unknown method"), ("InvalidParams", -32602, "invalid params"),
        ("InternalError", -32603, "internal error"), ("UnknownDevice", 1001, "unknown device"),
        ("WrongState", 1002, "wrong state"), ("Conflict", 1003, "conflict"),
        ("Unavailable", 1004, "unavailable: retry later"), ("PermissionDenied", 1005, "permission denied"),
        ("NotSupported", 1006, "not supported by this daemon's configuration"),
    ]

    /// The OpenRPC document of every method and event.
    func openRPC(version: String) -> JSONValue {
        [
            "openrpc": "1.2.6",
            "info": [
                "title": "regcoded control API",
                "version": .string(version),
                "description":
                    "JSON-RPC 2.0 on the Unix socket (one object per line) and over HTTP (POST /rpc). Events: subscribe on the socket, GET /events (server-sent events) over HTTP.",
            ],
            "methods": .array(methods.map(Self.document)),
            "components": [
                "schemas": ["Event": Self.eventSchema],
                "errors": .object(
                    Dictionary(uniqueKeysWithValues: Self.errors.map { ($0.name, ["code": .int($0.code), "message": .string($0.message)]) })
                ),
            ],
            "x-events": .array(
                Self.events.map { ["name": .string($0.name), "summary": .string($0.summary), "schema": ["$ref": "#/components/schemas/Event"]] }
            ),
            "x-notifications": [
                "event": "params: an Event (socket subscribe); over HTTP each event is one server-sent event `event`, id = seq",
                "cutoff": "params: {reason, lastSeq}: the subscriber fell behind; resume with since = lastSeq",
            ],
        ]
    }

    private static func document(_ method: ControlMethod) -> JSONValue {
        [
            "name": .string(method.name),
            "summary": .string(method.summary),
            "tags": [["name": .string(method.tag)]],
            "paramStructure": "by-name",
            "params": .array(
                method.parameters.map { parameter in
                    [
                        "name": .string(parameter.name),
                        "summary": .string(parameter.summary),
                        "required": .bool(parameter.required),
                        "schema": parameter.type.schema,
                    ]
                }
            ),
            "result": ["name": "result", "summary": .string(method.result), "schema": ["type": "object"]],
        ]
    }

    private static let eventSchema: JSONValue = [
        "type": "object",
        "required": ["seq", "time", "device", "app", "name", "args"],
        "properties": [
            "seq": ["type": "integer", "description": "Gap-free sequence number."],
            "time": ["type": "string", "format": "date-time"],
            "device": ["type": "string"],
            "app": ["type": "string"],
            "name": ["type": "string", "enum": .array(events.map { .string($0.name) })],
            "args": ["type": "object"],
        ],
    ]
}
