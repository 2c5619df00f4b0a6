/// RFC 9110 field syntax, checked before a request is sent: a value that carried CR or LF could end the
/// header early and inject fields or a second request (tokens and device data come from outside).
///
/// NIO's `NIOHTTPRequestHeadersValidator` checks the same on every write, as a channel handler (~4 % of the
/// daemon's samples per poll); here it is one pass over bytes the request builders already hold.
enum HeaderField {
    /// `token` characters (RFC 9110 §5.6.2) for the name; visible ASCII, obs-text, space and tab for the value.
    static func isValid(name: String, value: String) -> Bool {
        guard !name.isEmpty else { return false }
        for byte in name.utf8 where !isTokenCharacter(byte) { return false }
        return value.utf8.withContiguousStorageIfAvailable(isFieldValue) ?? value.utf8.allSatisfy(isFieldValueByte)
    }

    /// Whether every byte may appear in a field value (RFC 9110 §5.5): HTAB, SP, VCHAR or obs-text, that is, every
    /// byte but the other controls and DEL.
    static func isFieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Eight bytes at a time: values are bearer tokens and Base64 device data of hundreds of bytes, checked on
        // every request, and byte by byte this was ~4 % of the daemon's instructions per poll. A word with no byte
        // below 0x20 and none equal to 0x7F is valid as a whole; a word with one (a tab, or a byte that makes the
        // value invalid) is checked byte by byte. The two tests are the "has less than" and "has zero" word tests;
        // neither misses a byte it looks for.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while offset + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let hasControl = (word &- ones &* 0x20) & ~word & highBits
                let xorDEL = word ^ (ones &* 0x7F)
                let hasDEL = (xorDEL &- ones) & ~xorDEL & highBits
                if hasControl | hasDEL != 0 {
                    for index in offset..<offset + 8 where !isFieldValueByte(bytes[index]) { return false }
                }
                offset += 8
            }
        }
        while offset < bytes.count {
            guard isFieldValueByte(bytes[offset]) else { return false }
            offset += 1
        }
        return true
    }

    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        // ! # $ % & ' * + - . ^ _ ` | ~ (a switch, not an array literal: this runs for every byte of every name)
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
            true
        default:
            false
        }
    }

    /// A name as it may appear in an error message (control characters escaped).
    static func printable(_ name: String) -> String {
        String(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }
}
