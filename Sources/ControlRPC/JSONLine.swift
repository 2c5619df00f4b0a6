import NIOCore
import RegcodeSupport

/// One JSON value per line, read with the shared ``JSONValueParser`` and written with the shared ``JSONWriter``
/// (deterministic bytes: the same event is the same line for every subscriber and every replay).
package enum JSONLine {
    package struct DecodeError: Error {
        package var reason: String
    }

    /// Decodes the bytes of one line (without its newline) from a trusted peer: only nesting is limited.
    package static func decode(_ line: ByteBuffer) throws(DecodeError) -> JSONValue {
        do {
            return try JSONValueParser.parse(line.readableBytesView, numbers: .integralAsInt)
        } catch {
            throw DecodeError(reason: error.description)
        }
    }

    /// `value` as compact JSON followed by `\n`.
    package static func encode(_ value: JSONValue, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        let text = JSONWriter.text(value)
        var buffer = allocator.buffer(capacity: text.utf8.count + 1)
        buffer.writeString(text)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}
