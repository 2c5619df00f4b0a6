/// RFC 3986 percent-encoding, shared by path segments, query strings and form bodies.
package enum FormEncoding {
    /// Only the unreserved characters stay literal, so `/`, `?`, `#`, `&`, `=` and `+` can never change the
    /// structure of a path or a form. A switch, not a `Set<UInt8>`: every poll encodes its path, and hashing each
    /// byte cost more than the rest of the encoding.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    package static func percentEncode(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A single path segment; `.` and `..` are escaped too so a value can never climb the path.
    package static func pathSegment(_ text: String) -> String {
        switch text {
        case ".": "%2E"
        case "..": "%2E%2E"
        default: percentEncode(text)
        }
    }

    /// `application/x-www-form-urlencoded` / query-string encoding of ordered pairs.
    package static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }
}
