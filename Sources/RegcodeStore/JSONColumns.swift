import Foundation
import RegcodeEngine
import RegcodeSupport

/// JSON encoding and decoding of the TEXT columns that hold JSON.
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
    /// configuration after ``RegcodeStore/loadDevices()``.
    func settingsText(_ settings: DeviceSettings) throws -> String {
        var stripped = settings
        stripped.softwareStatement = nil
        stripped.signingKeys = nil
        return try text(stripped)
    }

    /// Event arguments. JSON has one number type, so an integral `.double` reads back as `.int`
    /// (the same happens on the control socket).
    func argsText(_ args: [String: JSONValue]) throws -> String {
        try text(args)
    }
}
