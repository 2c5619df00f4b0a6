import Foundation
import RegcodeEngine

/// A loosely typed JSON tree: the backend mixes strings and numbers for the same fields (v2 `notAfter` is a
/// string of epoch ms in sessions but a number in profiles), so typed `Decodable` models would be brittle.
enum ResponseJSON: Sendable, Equatable, Decodable {
    case object([String: ResponseJSON])
    case array([ResponseJSON])
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode([ResponseJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ResponseJSON].self))
        }
    }

    /// Parses `data`, returning nil for anything that is not JSON.
    static func parse(_ data: Data) -> ResponseJSON? {
        guard !data.isEmpty else { return nil }
        return try? JSONDecoder().decode(ResponseJSON.self, from: data)
    }

    subscript(key: String) -> ResponseJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var objectValue: [String: ResponseJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var arrayValue: [ResponseJSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The value if it is a JSON string.
    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// An integer from a JSON number or a string holding one (`"1733737089035"`).
    var int64Value: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .double(let value):
            return Int64(exactly: value.rounded(.towardZero))
        case .string(let text):
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if let value = Int64(trimmed) { return value }
            if let value = Double(trimmed) { return Int64(exactly: value.rounded(.towardZero)) }
            return nil
        default:
            return nil
        }
    }

    /// The value as the engine's JSON type (for user metadata, which reaches events as is).
    var jsonValue: JSONValue {
        switch self {
        case .object(let members): .object(members.mapValues(\.jsonValue))
        case .array(let elements): .array(elements.map(\.jsonValue))
        case .string(let text): .string(text)
        case .integer(let value): .int(value)
        case .double(let value): .double(value)
        case .bool(let value): .bool(value)
        case .null: .null
        }
    }
}
