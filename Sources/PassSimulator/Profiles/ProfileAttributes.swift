import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value, as carried by user-metadata attributes (strings, lists, objects such as `maxRating`).
package enum MetadataValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case list([MetadataValue])
    case object([String: MetadataValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Int64.self) {
            // Integers before doubles and booleans, so `1` stays an integer rather than `1.0` or `true`.
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MetadataValue].self) {
            self = .list(value)
        } else {
            self = .object(try container.decode([String: MetadataValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The text of a `.string`, else `nil`.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value `json` holds; an integral number is an `.integer`, as the `Decodable` reading makes it.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .integer(value)
        case .double(let value): self = json.intValue.map(MetadataValue.integer) ?? .number(value)
        case .string(let value): self = .string(value)
        case .array(let elements): self = .list(elements.map(MetadataValue.init))
        case .object(let members): self = .object(members.mapValues(MetadataValue.init))
        }
    }

    /// The object `json` holds, or `nil` when it is not a JSON object.
    static func object(parsing json: some Collection<UInt8>) -> [String: MetadataValue]? {
        guard case .object(let members)? = JSONValue(parsing: json) else { return nil }
        return members.mapValues(MetadataValue.init)
    }

    /// The value as JSON, for the shared writer.
    var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .integer(let value): .int(value)
        case .number(let value): .double(value)
        case .string(let value): .string(value)
        case .list(let elements): .array(elements.map(\.jsonValue))
        case .object(let members): .object(members.mapValues(\.jsonValue))
        }
    }
}

/// One user-metadata attribute of a profile: a value and whether Adobe marks it encrypted (`state: "enc"`).
package struct ProfileAttribute: Sendable, Equatable, Codable {
    /// The attribute's value.
    package var value: MetadataValue
    /// Whether the value is published as encrypted. The simulator holds no programmer certificate, so an "encrypted"
    /// value is only Base64 of the plain text; clients must treat it as opaque either way.
    package var encrypted: Bool

    /// An attribute with `value`, plain unless `encrypted`.
    package init(_ value: MetadataValue, encrypted: Bool = false) {
        self.value = value
        self.encrypted = encrypted
    }

    /// The attribute set of a freshly authenticated user: `userID`, `householdID`, `zip`, `maxRating`, `channelID`
    /// (plain) and `encryptedZip` (enc), derived deterministically from the user id.
    static func defaults(userId: String, householdId: String) -> [String: ProfileAttribute] {
        var hash: UInt32 = 2_166_136_261
        for byte in userId.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let zip = String(10_000 + Int(hash % 89_999))
        let secondZip = String(10_000 + Int((hash / 89_999) % 89_999))
        let channels = ["ABC", "CBS", "ESPN", "FOX", "HBO", "NBC"]
        let first = Int(hash % UInt32(channels.count))
        return [
            "userID": ProfileAttribute(.string(userId)),
            "householdID": ProfileAttribute(.string(householdId)),
            "zip": ProfileAttribute(.list([.string(zip), .string(secondZip)])),
            "maxRating": ProfileAttribute(
                .object([
                    "MPAA": .string("R"),
                    "VCHIP": .string("TV-MA"),
                    "URL": .string("https://parental-controls.example.com"),
                ])
            ),
            "channelID": ProfileAttribute(.list((0..<3).map { .string(channels[(first + $0) % channels.count]) })),
            "encryptedZip": ProfileAttribute(.string(Data(zip.utf8).base64EncodedString()), encrypted: true),
        ]
    }

    /// Applies admin overrides: a value replaces the attribute (keeping its encrypted state), `{"value": …,
    /// "state": "plain"|"enc"}` sets both, and `null` removes the attribute.
    static func merging(_ overrides: [String: MetadataValue], into base: [String: ProfileAttribute]) -> [String: ProfileAttribute] {
        var result = base
        for (name, value) in overrides {
            if case .null = value {
                result[name] = nil
            } else if case .object(let fields) = value, let inner = fields["value"],
                Set(fields.keys).isSubset(of: ["value", "state"]),
                fields["state"] == nil || fields["state"] == .string("plain") || fields["state"] == .string("enc")
            {
                result[name] = ProfileAttribute(inner, encrypted: fields["state"] == .string("enc"))
            } else {
                result[name] = ProfileAttribute(value, encrypted: base[name]?.encrypted ?? false)
            }
        }
        return result
    }
}
