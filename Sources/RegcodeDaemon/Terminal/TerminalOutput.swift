import Foundation
import Synchronization

/// Standard output for a person: lines (codes, logins) and, on a terminal, one status line kept under them.
///
/// A line printed while the status line shows clears it first and draws it again after, so the two never mix.
final class TerminalOutput: Sendable {
    private let status = Mutex<String?>(nil)

    /// Whether a live status line suits this standard output: a terminal, not under systemd (whose journal would
    /// keep every redraw), not a `dumb` terminal.
    static func wantsStatusLine(environment: [String: String]) -> Bool {
        isatty(STDOUT_FILENO) == 1 && environment["INVOCATION_ID"] == nil && environment["JOURNAL_STREAM"] == nil
            && environment["NOTIFY_SOCKET"] == nil && environment["TERM"] != "dumb"
    }

    /// Carriage return and erase-line: back to the start of the status line and wipe it.
    private static let wipe = "\r\u{1B}[K"

    func line(_ text: String) {
        status.withLock { shown in
            Self.write((shown == nil ? "" : Self.wipe) + text + "\n" + (shown ?? ""))
        }
    }

    func showStatus(_ text: String) {
        status.withLock { shown in
            shown = text
            Self.write(Self.wipe + text)
        }
    }

    func clearStatus() {
        status.withLock { shown in
            if shown != nil { Self.write(Self.wipe) }
            shown = nil
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
