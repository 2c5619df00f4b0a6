import NIOCore
import RegcodeSupport

/// A JSON-RPC 2.0 error object; also thrown by method handlers.
package struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    package var code: Int
    package var message: String
    package var data: JSONValue?

    package init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    package static func parseError(_ message: String) -> RPCError { RPCError(code: -32700, message: message) }
    package static func invalidRequest(_ message: String) -> RPCError { RPCError(code: -32600, message: message) }
    package static func methodNotFound(_ method: String) -> RPCError { RPCError(code: -32601, message: "unknown method '\(method)'") }
    package static func invalidParams(_ message: String, data: JSONValue? = nil) -> RPCError { RPCError(code: -32602, message: message, data: data) }
    package static func internalError(_ message: String) -> RPCError { RPCError(code: -32603, message: message) }

    /// Application errors (outside the range JSON-RPC reserves).
    package static func unknownDevice(_ name: String) -> RPCError {
        RPCError(code: 1001, message: "unknown device '\(name)'", data: ["device": .string(name)])
    }
    package static func wrongState(_ message: String, data: JSONValue? = nil) -> RPCError { RPCError(code: 1002, message: message, data: data) }
    package static func conflict(_ message: String, data: JSONValue? = nil) -> RPCError { RPCError(code: 1003, message: message, data: data) }
    package static func unavailable(_ message: String) -> RPCError { RPCError(code: 1004, message: message) }
    /// The call needed the database and could not use it (locked by another process, disk full): nothing changed,
    /// and the same call may succeed once storage recovers. `data.storage` says how storage fares when the daemon
    /// knows (``ControlHandler``s add it).
    package static func storageUnavailable(_ reason: String, storage: JSONValue? = nil) -> RPCError {
        var data: [String: JSONValue] = ["reason": "storage", "retryable": true, "error": .string(reason)]
        if let storage { data["storage"] = storage }
        return RPCError(code: 1004, message: "storage unavailable: \(reason); retry once it recovers", data: .object(data))
    }

    /// Whether this is a ``storageUnavailable(_:storage:)`` answer.
    package var isStorageUnavailable: Bool { code == 1004 && data?["reason"] == .string("storage") }

    /// The peer failed the `SO_PEERCRED` check; sent once, then the connection is closed.
    package static let permissionDenied = RPCError(code: 1005, message: "permission denied")

    /// The answer to a line longer than the framing limit (the line is discarded, the connection kept).
    package static func lineTooLong(limit: Int) -> RPCError {
        RPCError(
            code: -32600,
            message: "line exceeds the \(describeByteCount(limit)) limit and was discarded",
            data: ["limit": .int(Int64(limit))]
        )
    }

    /// The error object as it appears in a reply.
    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    /// Reads an error object as it appears in a reply; nil when `value` is not one.
    package init?(jsonValue value: JSONValue) {
        guard let code = value["code"]?.intValue, let message = value["message"]?.stringValue else { return nil }
        self.init(code: Int(code), message: message, data: value["data"])
    }

    package var description: String { "error \(code): \(message)" }
}

/// "1 MiB" for the default limit, a plain byte count otherwise.
package func describeByteCount(_ count: Int) -> String {
    if count >= 1 << 20, count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
    if count >= 1 << 10, count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
    return "\(count) bytes"
}

/// A validated JSON-RPC 2.0 request or notification.
struct RPCRequest: Sendable, Equatable {
    /// nil for a notification (no `id` member), which gets no response.
    var id: JSONValue?
    var method: String
    var params: JSONValue?

    /// A line that is not a valid request, with the id to answer under (null when it could not be read).
    struct Rejection: Error, Equatable {
        var error: RPCError
        var id: JSONValue
    }

    /// Validates a decoded line against JSON-RPC 2.0 §4.
    ///
    /// Batches are refused: requests on one connection are answered strictly in order, one line each, and a batch
    /// would need a second response shape for no gain on a local socket.
    init(_ value: JSONValue) throws(Rejection) {
        guard case .object(let object) = value else {
            if case .array = value {
                throw Rejection(error: .invalidRequest("batch requests are not supported; send one request object per line"), id: .null)
            }
            throw Rejection(error: .invalidRequest("a request must be a JSON object"), id: .null)
        }
        let id = object["id"]
        switch id {
        case nil, .null?, .string?, .int?, .double?: break
        default: throw Rejection(error: .invalidRequest("\"id\" must be a string, a number or null"), id: .null)
        }
        let answerID = id ?? .null
        guard object["jsonrpc"] == .string("2.0") else {
            throw Rejection(error: .invalidRequest("\"jsonrpc\" must be \"2.0\""), id: answerID)
        }
        guard case .string(let method)? = object["method"] else {
            throw Rejection(error: .invalidRequest("\"method\" must be a string"), id: answerID)
        }
        switch object["params"] {
        // A null params member is read as absent: several client libraries send it for parameterless calls.
        case nil, .null?: self.params = nil
        case .object(let params)?: self.params = .object(params)
        case .array(let params)?: self.params = .array(params)
        default: throw Rejection(error: .invalidRequest("\"params\" must be an object or an array"), id: answerID)
        }
        self.id = id
        self.method = method
    }

    /// Parses one line within `limits`, then validates it as a request.
    init(line: ByteBuffer, limits: InputLimits = InputLimits()) throws(Rejection) {
        let value: JSONValue
        do {
            value = try JSONValueParser.parse(line.readableBytesView, limits: limits, numbers: .integralAsInt)
        } catch {
            switch error {
            case .syntax(let reason):
                throw Rejection(error: .parseError("parse error: \(reason)"), id: .null)
            case .limit(let limit, let value, let offset):
                throw Rejection(error: .inputLimitExceeded(limit, value: value, offset: offset), id: .null)
            }
        }
        try self.init(value)
    }
}

/// The messages the server writes (on the socket one per line, over HTTP one per body).
package enum RPCMessage {
    package static func result(id: JSONValue, _ result: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "result": result]
    }

    package static func error(id: JSONValue, _ error: RPCError) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "error": error.jsonValue]
    }

    package static func notification(method: String, params: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "method": .string(method), "params": params]
    }

    package static func request(id: JSONValue?, method: String, params: JSONValue?) -> JSONValue {
        var object: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let id { object["id"] = id }
        if let params { object["params"] = params }
        return .object(object)
    }
}
