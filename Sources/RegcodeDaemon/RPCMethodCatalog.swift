import AccessEnablerAPI
import RegcodeSupport

/// Every control method with its parameters, in one table: the handler accepts exactly these parameter names, and
/// `rpc.discover` describes them as an OpenRPC document (so clients can be generated), as varlink's introspection does.
enum RPCMethodCatalog {
    /// A parameter's JSON Schema type.
    enum Kind: Sendable {
        case string, integer, boolean, object, strings, nullableString

        var schema: JSONValue {
            switch self {
            case .string: ["type": "string"]
            case .integer: ["type": "integer"]
            case .boolean: ["type": "boolean"]
            case .object: ["type": "object"]
            case .strings: ["type": "array", "items": ["type": "string"]]
            case .nullableString: ["type": ["string", "null"]]
            }
        }
    }

    struct Parameter: Sendable {
        var name: String
        var kind: Kind
        var required = false
        var summary: String
    }

    struct Method: Sendable {
        var name: String
        var summary: String
        var parameters: [Parameter]
        /// What the result holds, in words.
        var result: String
        var accessEnabler = false
    }

    private static let device = Parameter(name: "device", kind: .string, required: true, summary: "Device name, e.g. stb-1.")
    private static let app = Parameter(name: "app", kind: .string, summary: "App of a device that hosts several (default: its first app).")

    private static func accessEnabler(_ name: String, _ summary: String, _ extra: [Parameter] = []) -> Method {
        Method(
            name: name,
            summary: summary,
            parameters: [device, app] + extra,
            result: "{device, app?, accepted, state}; the callbacks arrive as events",
            accessEnabler: true
        )
    }

    static let methods: [Method] = [
        accessEnabler(
            "setRequestor",
            "AccessEnabler setRequestor: loads the requestor's configuration (registers the device first if needed).",
            [
                Parameter(name: "requestor", kind: .string, summary: "Must match the device's configured requestor."),
                Parameter(name: "secret", kind: .string, summary: "Legacy v1 signing secret (with publicKey); kept in memory only."),
                Parameter(name: "publicKey", kind: .string, summary: "Legacy v1 public key (with secret)."),
            ]
        ),
        accessEnabler(
            "setOptions",
            "AccessEnabler setOptions.",
            [
                Parameter(
                    name: "options",
                    kind: .object,
                    required: true,
                    summary: "visitorID, device_info (base64 JSON), applicationProfile, handleSVC."
                )
            ]
        ),
        accessEnabler("checkAuthentication", "AccessEnabler checkAuthentication: answers from the stored profile."),
        accessEnabler(
            "getAuthentication",
            "AccessEnabler getAuthentication: the provider picker, then a registration code and polling.",
            [Parameter(name: "mvpd", kind: .string, summary: "Select this MVPD without the picker.")]
        ),
        accessEnabler(
            "setSelectedProvider",
            "AccessEnabler setSelectedProvider: answers the picker; null cancels.",
            [Parameter(name: "mvpd", kind: .nullableString, required: true, summary: "An MVPD id, or null to cancel.")]
        ),
        accessEnabler("getSelectedProvider", "AccessEnabler getSelectedProvider."),
        accessEnabler(
            "checkAuthorization",
            "AccessEnabler checkAuthorization.",
            [Parameter(name: "resource", kind: .string, required: true, summary: "Resource id, e.g. REF30.")]
        ),
        accessEnabler(
            "getAuthorization",
            "AccessEnabler getAuthorization: a decision and a media token.",
            [Parameter(name: "resource", kind: .string, required: true, summary: "Resource id, e.g. REF30.")]
        ),
        accessEnabler(
            "checkPreauthorizedResources",
            "AccessEnabler checkPreauthorizedResources.",
            [Parameter(name: "resources", kind: .strings, required: true, summary: "Resource ids.")]
        ),
        accessEnabler(
            "getMetadata",
            "AccessEnabler getMetadata.",
            [
                Parameter(name: "key", kind: .object, summary: "{opCode, resource_id?, user_metadata_name?}; or give them at the top level."),
                Parameter(name: "opCode", kind: .integer, summary: "0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata."),
                Parameter(name: "resource_id", kind: .string, summary: "For opCode 1."),
                Parameter(name: "user_metadata_name", kind: .string, summary: "For opCode 3."),
            ]
        ),
        accessEnabler("logout", "AccessEnabler logout."),
        Method(
            name: "devices.list",
            summary: "Every device: state, code and expiry, polls, last poll, fleet and last outcome.",
            parameters: [],
            result: "{devices: [{device, fleet, state, code, expires, polls, lastHttpStatus, lastPoll, mvpd, lastOutcome}]}"
        ),
        Method(
            name: "devices.get",
            summary: "One device in detail.",
            parameters: [device],
            result: "the devices.list fields plus identity, tokens and profile"
        ),
        Method(
            name: "devices.add",
            summary: "Adds a device modelled on a fleet and starts it.",
            parameters: [
                device,
                Parameter(name: "fleet", kind: .string, summary: "Fleet to model it on (default: the first)."),
                Parameter(name: "requestor", kind: .string, summary: "Requestor id."),
                Parameter(name: "profile", kind: .string, summary: "v2 or v1."),
                Parameter(name: "mvpd", kind: .string, summary: "MVPD to pick."),
                Parameter(name: "scenario", kind: .string, summary: "login, idle or cycle."),
                Parameter(
                    name: "login",
                    kind: .object,
                    summary: "Options of the login and cycle scenarios: {provider: regular|temppass, tempPassEmail} (what the picker picks)."
                ),
            ],
            result: "the devices.get answer"
        ),
        Method(name: "devices.remove", summary: "Stops and forgets a device.", parameters: [device], result: "{device, removed}"),
        Method(
            name: "devices.reset",
            summary: "Forgets what the device learned, keeps its identity, starts again.",
            parameters: [device],
            result: "{device, reset}"
        ),
        Method(
            name: "devices.polls",
            summary: "A device's latest polls, newest first.",
            parameters: [device, Parameter(name: "limit", kind: .integer, summary: "At most this many (1–1000, default 50).")],
            result: "{polls: [{code, sentAt, plannedAt, latencyMs, httpStatus, outcome, nextDelayMs}]}"
        ),
        Method(
            name: "fleets.stats",
            summary: "Per fleet: devices by state, polls per second, 429s and errors per minute, totals.",
            parameters: [],
            result:
                "{windowSeconds, fleets: [{name, devices, states, pollsPerSecond, throttledPerMinute, errorsPerMinute, polls, throttled, errors}], totals}"
        ),
        Method(name: "apps.list", summary: "The apps a device hosts.", parameters: [device], result: "{device, apps: [...]}"),
        Method(
            name: "apps.reinstall",
            summary: "Reinstalls an app (its vendor's device id changes).",
            parameters: [device, app],
            result: "{device, app, ...}"
        ),
        Method(
            name: "sso.explain",
            summary: "Why an app shares (or not) another app's login.",
            parameters: [device, app],
            result: "{domain, deviceId, used, ...}"
        ),
        Method(
            name: "storage.list",
            summary: "A device's shared token storage (metadata only).",
            parameters: [device, Parameter(name: "domain", kind: .string, summary: "Only this storage domain.")],
            result: "{device, tokens: [...]}"
        ),
        Method(name: "vsa.status", summary: "The device's Apple TV Provider state.", parameters: [device], result: "{device, account, access, ...}"),
        Method(
            name: "vsa.signIn",
            summary: "Signs the device's TV Provider account in.",
            parameters: [
                device,
                Parameter(name: "provider", kind: .string, required: true, summary: "MVPD id."),
                Parameter(name: "userId", kind: .string, summary: "User id."),
                Parameter(name: "householdId", kind: .string, summary: "Household id."),
                Parameter(name: "zip", kind: .string, summary: "Zip code."),
                Parameter(name: "expires", kind: .integer, summary: "Expiry, epoch ms."),
            ],
            result: "the vsa.status answer"
        ),
        Method(name: "vsa.signOut", summary: "Signs the TV Provider account out.", parameters: [device], result: "the vsa.status answer"),
        Method(
            name: "vsa.setAccess",
            summary: "Sets an app's TV Provider permission.",
            parameters: [device, app, Parameter(name: "access", kind: .string, required: true, summary: "granted, denied or undetermined.")],
            result: "the vsa.status answer"
        ),
        Method(
            name: "vsa.injectFault",
            summary: "Makes the TV Provider fail.",
            parameters: [
                device,
                Parameter(name: "kind", kind: .nullableString, required: true, summary: "A fault kind, or null to clear."),
                Parameter(name: "once", kind: .boolean, summary: "Only for the next request."),
            ],
            result: "the vsa.status answer"
        ),
        Method(
            name: "vsa.pick",
            summary: "Answers an open TV Provider picker.",
            parameters: [
                device, app,
                Parameter(name: "provider", kind: .string, summary: "Pick this provider."),
                Parameter(name: "other", kind: .boolean, summary: "Choose \"Other TV Provider\"."),
                Parameter(name: "cancel", kind: .boolean, summary: "Cancel the picker."),
            ],
            result: "{device, app, ...}"
        ),
        Method(
            name: "simulator.approve",
            summary: "Approves a code on the embedded simulator, as a user on the second screen would.",
            parameters: [
                Parameter(name: "code", kind: .string, required: true, summary: "The registration code."),
                Parameter(name: "mvpd", kind: .string, summary: "The MVPD to sign in with (default: the device's selection)."),
            ],
            result: "{approved, code, mvpd}"
        ),
        Method(
            name: "daemon.status",
            summary: "Version, uptime, devices by state, storage health, the activation URL, the shard (K/N or null).",
            parameters: [],
            result: "{version, pid, uptimeSeconds, devices, states, lastSeq, storage, activationUrl, starting, shard, ...}"
        ),
        Method(
            name: "subscribe",
            summary: "Streams events (socket only; over HTTP use GET /events): stored ones after since, then live ones.",
            parameters: [
                Parameter(name: "devices", kind: .strings, summary: "Only these devices."),
                Parameter(name: "events", kind: .strings, summary: "Only these event names."),
                Parameter(name: "since", kind: .integer, summary: "Replay stored events after this sequence number first."),
            ],
            result: "{subscribed, lastSeq, since}; then event notifications"
        ),
        Method(name: "rpc.discover", summary: "This API as an OpenRPC document.", parameters: [], result: "an OpenRPC 1.2.6 document"),
    ]

    private static let byName: [String: Method] = Dictionary(uniqueKeysWithValues: methods.map { ($0.name, $0) })

    static func method(_ name: String) -> Method? { byName[name] }

    /// The parameter names `method` accepts; nil for a method this table does not list.
    static func parameterNames(_ name: String) -> Set<String>? {
        byName[name].map { Set($0.parameters.map(\.name)) }
    }

    /// The events a subscription carries, by name.
    static let events: [(name: String, summary: String)] =
        Callback.allCases.map { ($0.rawValue, "AccessEnabler callback \($0.rawValue)") } + [
            ("sso.tokenShared", "Single sign-on: an app used a token another app stored."),
            ("sso.tokenIgnored", "Single sign-on: a stored token was ignored (bound to another device id or client)."),
            ("sso.tokenWiped", "Single sign-on: the storage sanitizer wiped tokens."),
        ]

    /// The OpenRPC document of every method and event.
    static func openRPC(version: String) -> JSONValue {
        let eventSchema: JSONValue = [
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
        return [
            "openrpc": "1.2.6",
            "info": [
                "title": "regcoded control API",
                "version": .string(version),
                "description":
                    "JSON-RPC 2.0 on the Unix socket (one object per line) and over HTTP (POST /rpc). Events: subscribe on the socket, GET /events (server-sent events) over HTTP.",
            ],
            "methods": .array(
                methods.map { method in
                    [
                        "name": .string(method.name),
                        "summary": .string(method.summary),
                        "tags": .array([
                            .object(["name": .string(method.accessEnabler ? "AccessEnabler" : String(method.name.split(separator: ".").first ?? ""))])
                        ]),
                        "paramStructure": "by-name",
                        "params": .array(
                            method.parameters.map { parameter in
                                [
                                    "name": .string(parameter.name),
                                    "summary": .string(parameter.summary),
                                    "required": .bool(parameter.required),
                                    "schema": parameter.kind.schema,
                                ]
                            }
                        ),
                        "result": ["name": "result", "summary": .string(method.result), "schema": ["type": "object"]],
                    ]
                }
            ),
            "components": [
                "schemas": ["Event": eventSchema],
                "errors": .object(
                    Dictionary(
                        uniqueKeysWithValues: [
                            ("ParseError", -32700, "parse error"), ("InvalidRequest", -32600, "invalid request"),
                            ("MethodNotFound", -32601, "unknown method"), ("InvalidParams", -32602, "invalid params"),
                            ("InternalError", -32603, "internal error"), ("UnknownDevice", 1001, "unknown device"),
                            ("WrongState", 1002, "wrong state"), ("Conflict", 1003, "conflict"),
                            ("Unavailable", 1004, "unavailable: retry later"), ("PermissionDenied", 1005, "permission denied"),
                            ("NotSupported", 1006, "not supported by this daemon's configuration"),
                        ].map { ($0.0, JSONValue.object(["code": .int(Int64($0.1)), "message": .string($0.2)])) }
                    )
                ),
            ],
            "x-events": .array(
                events.map { ["name": .string($0.name), "summary": .string($0.summary), "schema": ["$ref": "#/components/schemas/Event"]] }
            ),
            "x-notifications": [
                "event": "params: an Event (socket subscribe); over HTTP each event is one server-sent event `event`, id = seq",
                "cutoff": "params: {reason, lastSeq}: the subscriber fell behind; resume with since = lastSeq",
            ],
        ]
    }
}
