import Foundation
import NIOCore
import NIOFoundationCompat
import RegcodeSupport

/// One JSON value per line: decoding through Foundation, encoding with the shared ``JSONWriter``
/// (deterministic bytes: the same event is the same line for every subscriber and every replay).
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
        let text = JSONWriter.text(value)
        var buffer = allocator.buffer(capacity: text.utf8.count + 1)
        buffer.writeString(text)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}
