import RegcodeSupport

/// Foundation's reading of a JSON document as a ``JSONValue``, to check the project's own reader and writer
/// against: the type-guessing `Decodable` that `JSONValueParser` replaced, kept here as the reference.
struct FoundationJSON: Decodable {
    var value: JSONValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let bool = try? container.decode(Bool.self) {
            value = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            value = .int(int)
        } else if let double = try? container.decode(Double.self) {
            value = .double(double)
        } else if let string = try? container.decode(String.self) {
            value = .string(string)
        } else if let array = try? container.decode([FoundationJSON].self) {
            value = .array(array.map(\.value))
        } else {
            value = .object(try container.decode([String: FoundationJSON].self).mapValues(\.value))
        }
    }
}
