import Foundation
import RegcodeEngine
import RegcodeSupport

/// JSON encoding and decoding of the TEXT columns that hold JSON.
///
/// Event arguments are ``JSONValue``s and go through the shared ``JSONValueParser`` and ``JSONWriter``. The other
/// columns hold the store's `Codable` records (settings, apps, snapshots), whose shape their `Codable` conformances
/// define, so those still use Foundation's coders.
///
/// Output is compact with sorted keys, so equal values give equal text (stable diffs, and
/// `sqlite3` users can compare rows). Coders are made per call: they are cheap next to the
/// statements they feed and this keeps them off the `Sendable` store.
struct JSONColumns {
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    func text(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func value<T: Decodable>(_ type: T.Type, from text: String, table: String, key: String) throws -> T {
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw RegcodeStoreError.corruptRow(table: table, key: key, reason: "invalid \(T.self) JSON: \(error)")
        }
    }

    /// The `settings` column: the settings minus their secrets. The software statement and the v1
    /// signing keys are never written to disk; the daemon supplies them again from its
    /// configuration after ``RegcodeStore/loadDevices()``. The name is left out too (empty): it is the
    /// row's key, and without it a fleet's devices share one text, which a load decodes once.
    func settingsText(_ settings: DeviceSettings) throws -> String {
        var stripped = settings
        stripped.softwareStatement = nil
        stripped.signingKeys = nil
        stripped.name = ""
        return try text(stripped)
    }

    /// `value(_:from:table:key:)` remembered by text: the devices of a fleet store the same settings, MVPD
    /// list and options, and decoding them was most of the time a restart with 50,000 devices took.
    func cachedValue<T: Decodable>(_ type: T.Type, from text: String, in cache: inout JSONColumnCache<T>, table: String, key: String) throws -> T {
        // The previous row's text first: devices of one fleet come in a row, and comparing two equal texts is much
        // cheaper than hashing one (settings are a kilobyte or two).
        if let last = cache.last, last.text == text { return last.value }
        let value: T
        if let known = cache.byText[text] {
            value = known
        } else {
            value = try self.value(type, from: text, table: table, key: key)
            cache.byText[text] = value
        }
        cache.last = (text, value)
        return value
    }

    /// Event arguments, in the same text the socket sends them (``JSONWriter``: sorted keys, no escaped slashes).
    /// Rows written before by `JSONEncoder` are the same grammar and read back the same way. JSON has one number
    /// type, so an integral `.double` reads back as `.int` (the same happens on the control socket).
    func argsText(_ args: [String: JSONValue]) -> String {
        JSONWriter.text(.object(args))
    }

    /// Reads an `args` column; anything but a JSON object is a corrupt row.
    func args(from text: String, table: String, key: String) throws -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONValueParser.parse(text.utf8, numbers: .integralAsInt)
        } catch {
            throw RegcodeStoreError.corruptRow(table: table, key: key, reason: "invalid arguments JSON: \(error)")
        }
        guard case .object(let members) = value else {
            throw RegcodeStoreError.corruptRow(table: table, key: key, reason: "invalid arguments JSON: not an object")
        }
        return members
    }
}

/// Decoded JSON column values by their text, for ``JSONColumns/cachedValue(_:from:in:table:key:)``.
struct JSONColumnCache<T> {
    var byText: [String: T] = [:]
    var last: (text: String, value: T)?
}
