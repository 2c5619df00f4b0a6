/// Hashes that place things the same way in every process, on every host and in every release (Swift's
/// `Hasher` is seeded per process, so it cannot place a device).
package enum StableHash {
    /// 64-bit FNV-1a of the UTF-8 bytes.
    package static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// FNV-1a finished with SplitMix64's mix, so every bit depends on every byte: FNV-1a's lowest bit is
    /// only the parity of the bytes' lowest bits, too little to split names like `stb-1`, `stb-2` by.
    package static func mixed(_ text: String) -> UInt64 {
        var generator = SplitMix64(seed: fnv1a64(text))
        return generator.next()
    }
}
