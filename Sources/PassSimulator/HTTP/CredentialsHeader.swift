/// `<scheme> <value>` header fields (`Authorization: Bearer …`, `AP-Device-Identifier: fingerprint …`), read over
/// their UTF-8 bytes: these are parsed on every call, and splitting and lowercasing copies of them cost ~5 % of the
/// simulator's CPU per poll.
enum CredentialsHeader {
    /// What follows `scheme` (ASCII letters, any case) and the spaces after it; `nil` when the field does not start
    /// with the scheme (after leading spaces) followed by a space. The value keeps any trailing blanks.
    ///
    /// - Parameter scheme: lowercase ASCII letters.
    static func value(of field: String, scheme: StaticString) -> Substring? {
        let bytes = field.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") { bytes.formIndex(after: &index) }
        let expected = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        for letter in expected {
            // ORing 0x20 folds an ASCII capital onto its small letter; no other byte lands on a small letter.
            guard index < bytes.endIndex, bytes[index] | 0x20 == letter else { return nil }
            bytes.formIndex(after: &index)
        }
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") else { return nil }
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") { bytes.formIndex(after: &index) }
        return field[index...]
    }

    /// The token of `Bearer <token>`, without surrounding blanks; `nil` when not a non-empty bearer token.
    static func bearerToken(_ field: String) -> String? {
        guard let token = Self.value(of: field, scheme: "bearer")?.trimmingBlanks, !token.isEmpty else { return nil }
        return String(token)
    }

    /// The value of `fingerprint <base64>` (reference §7, `AP-Device-Identifier`); `nil` unless it is one value that
    /// decodes to at least one byte. Spaces may only trail it.
    static func fingerprint(_ field: String) -> String? {
        guard let value = Self.value(of: field, scheme: "fingerprint") else { return nil }
        let end = value.utf8.firstIndex(of: UInt8(ascii: " ")) ?? value.endIndex
        let fingerprint = value[..<end]
        guard value[end...].utf8.allSatisfy({ $0 == UInt8(ascii: " ") }), Base64.decodesToBytes(fingerprint) else { return nil }
        return String(fingerprint)
    }
}
