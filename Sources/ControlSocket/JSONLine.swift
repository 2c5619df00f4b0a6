import Foundation
import NIOCore
import NIOFoundationCompat
import RegcodeEngine

/// One JSON value per line: decoding through Foundation, encoding by hand.
///
/// Encoding is done here rather than with `JSONEncoder` so that output is byte-for-byte deterministic (keys sorted
/// by their UTF-8 bytes, no escaped slashes, integers never printed as doubles) and goes straight into a
/// `ByteBuffer` without a `Data` round trip on the event hot path.
enum JSONLine {
    struct DecodeError: Error {
        var reason: String
    }

    /// Decodes the bytes of one line (without its newline).
    static func decode(_ line: ByteBuffer) throws(DecodeError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: line)
        } catch {
            throw DecodeError(reason: Self.diagnose(line))
        }
    }

    /// A specific reason for a line `JSONDecoder` refused: it only says "not valid JSON", while
    /// `JSONSerialization` names the position. Only runs on the error path.
    private static func diagnose(_ line: ByteBuffer) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(buffer: line, byteTransferStrategy: .noCopy), options: [.fragmentsAllowed])
            return "unsupported value (numbers must fit in a 64-bit integer or a double)"
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "not valid JSON"
        }
    }

    /// `value` as compact JSON followed by `\n`.
    static func encode(_ value: JSONValue, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 256)
        self.write(value, to: &buffer)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    static func write(_ value: JSONValue, to buffer: inout ByteBuffer) {
        switch value {
        case .null:
            buffer.writeStaticString("null")
        case .bool(let flag):
            buffer.writeStaticString(flag ? "true" : "false")
        case .int(let number):
            buffer.writeString(String(number))
        case .double(let number):
            // JSON has no NaN or infinity; null is what JavaScript's JSON.stringify writes for them too.
            if number.isFinite {
                buffer.writeString(number.description)
            } else {
                buffer.writeStaticString("null")
            }
        case .string(let string):
            self.write(string: string, to: &buffer)
        case .array(let elements):
            buffer.writeInteger(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
                self.write(element, to: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "]"))
        case .object(let members):
            buffer.writeInteger(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
                self.write(string: key, to: &buffer)
                buffer.writeInteger(UInt8(ascii: ":"))
                self.write(members[key]!, to: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "}"))
        }
    }

    private static func write(string: String, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        let utf8 = string.utf8
        if !utf8.contains(where: Self.needsEscape) {
            buffer.writeString(string)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case 0x08: buffer.writeStaticString("\\b")
                case 0x0C: buffer.writeStaticString("\\f")
                case ..<0x20:
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(Self.hexDigits[Int(byte >> 4)])
                    buffer.writeInteger(Self.hexDigits[Int(byte & 0x0F)])
                default: buffer.writeInteger(byte)
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
