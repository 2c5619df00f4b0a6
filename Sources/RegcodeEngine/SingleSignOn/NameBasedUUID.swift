import Crypto
import Foundation

/// RFC 9562 name-based UUIDs (version 5, SHA-1), used to derive stable per-vendor ids.
package enum NameBasedUUID {
    /// The version-5 UUID of `name` (UTF-8) in `namespace`.
    package static func v5(namespace: UUID, name: String) -> UUID {
        var input = withUnsafeBytes(of: namespace.uuid) { Array($0) }
        input.append(contentsOf: Array(name.utf8))
        var bytes = Array(Insecure.SHA1.hash(data: input).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }

    /// A UUID made of the first 16 bytes of `bytes` as they are (no version bits: only a namespace).
    static func raw<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UUID {
        var b = Array(bytes.prefix(16))
        while b.count < 16 { b.append(0) }
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
