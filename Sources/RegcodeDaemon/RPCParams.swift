import ControlRPC
import RegcodeEngine
import RegcodeSupport

/// Typed access to JSON-RPC `params`, answering -32602 with the offending member named.
struct RPCParams {
    let object: [String: JSONValue]

    init(_ params: JSONValue?) throws(RPCError) {
        switch params {
        case nil, .null: object = [:]
        case .object(let object): self.object = object
        default: throw .invalidParams("params must be an object")
        }
    }

    init(object: [String: JSONValue]) {
        self.object = object
    }

    func string(_ key: String) throws(RPCError) -> String {
        guard let value = object[key] else { throw .invalidParams("missing '\(key)'", data: ["member": .string(key)]) }
        guard let string = value.stringValue, !string.isEmpty else {
            throw .invalidParams("'\(key)' must be a non-empty string", data: ["member": .string(key)])
        }
        return string
    }

    func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let string = value.stringValue, !string.isEmpty else {
            throw .invalidParams("'\(key)' must be a non-empty string or null", data: ["member": .string(key)])
        }
        return string
    }

    func optionalInt(_ key: String) throws(RPCError) -> Int64? {
        guard let value = object[key], value != .null else { return nil }
        guard let int = value.intValue else { throw .invalidParams("'\(key)' must be an integer", data: ["member": .string(key)]) }
        return int
    }

    func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard let bool = value.boolValue else { throw .invalidParams("'\(key)' must be true or false", data: ["member": .string(key)]) }
        return bool
    }

    func optionalStrings(_ key: String) throws(RPCError) -> [String]? {
        guard let value = object[key], value != .null else { return nil }
        guard let array = value.arrayValue else { throw .invalidParams("'\(key)' must be an array of strings", data: ["member": .string(key)]) }
        var strings: [String] = []
        for item in array {
            guard let string = item.stringValue else { throw .invalidParams("'\(key)' must be an array of strings", data: ["member": .string(key)]) }
            strings.append(string)
        }
        return strings
    }

    func stringMap(_ key: String) throws(RPCError) -> [String: String]? {
        guard let value = object[key], value != .null else { return nil }
        guard let map = value.objectValue else { throw .invalidParams("'\(key)' must be an object of strings", data: ["member": .string(key)]) }
        var result: [String: String] = [:]
        for (name, item) in map {
            guard let string = item.stringValue else {
                throw .invalidParams("'\(key).\(name)' must be a string", data: ["member": .string("\(key).\(name)")])
            }
            result[name] = string
        }
        return result
    }

    /// Refuses members the method does not know, so a typo is not silently ignored.
    func allowOnly(_ keys: Set<String>) throws(RPCError) {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw .invalidParams(
                "unknown member '\(unknown)'",
                data: ["member": .string(unknown), "allowed": .array(keys.sorted().map { .string($0) })]
            )
        }
    }
}
