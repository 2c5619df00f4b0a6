#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Text made safe for HTML and XML markup (the simulator's activation pages, the soak report, SAML messages), and
/// read back.
package enum HTML {
    /// `text` safe both as element content and inside a quoted attribute. Control characters are
    /// not allowed in HTML text, so they show as U+FFFD (newline and tab are kept).
    package static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            case _ where (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || scalar.value == 0x7F:
                output += "\u{FFFD}"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// The text `escape` (or another writer of the five predefined entities) wrote: entities back to characters,
    /// `&amp;` last so `&amp;lt;` stays `&lt;`.
    package static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return
            text
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&#x27;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
