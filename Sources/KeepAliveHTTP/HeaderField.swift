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
        for byte in value.utf8 {
            if byte == 0x09 || byte == 0x20 || (byte > 0x20 && byte != 0x7F) { continue }
            return false
        }
        return true
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
