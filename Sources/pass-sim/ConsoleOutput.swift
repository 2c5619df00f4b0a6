#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes straight to stdout so the line is visible at once even when stdout is a pipe.
func writeLine(_ text: String) {
    writeText(text, to: 1)
}

/// Writes a line to stderr.
func writeError(_ text: String) {
    writeText(text, to: 2)
}

private func writeText(_ text: String, to descriptor: Int32) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
