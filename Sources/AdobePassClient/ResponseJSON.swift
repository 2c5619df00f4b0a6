import Foundation
import RegcodeSupport

// Backend answers are read as a loosely typed JSON tree (the shared `JSONValue`): the backend mixes
// strings and numbers for the same fields (v2 `notAfter` is a string of epoch ms in sessions but a
// number in profiles), so typed `Decodable` models would be brittle.
extension JSONValue {
    /// Parses `data`, returning nil for anything that is not JSON.
    static func parse(_ data: Data) -> JSONValue? {
        guard !data.isEmpty else { return nil }
        return JSONValue(parsing: data)
    }

    /// An integer from a JSON number (truncated) or a string holding one (`"1733737089035"`).
    var int64Value: Int64? {
        switch self {
        case .int(let value):
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
}
