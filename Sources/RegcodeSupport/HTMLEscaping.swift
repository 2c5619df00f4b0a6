/// Text made safe for HTML pages (the simulator's activation pages, the soak report).
public enum HTML {
    /// `text` safe both as element content and inside a quoted attribute. Control characters are
    /// not allowed in HTML text, so they show as U+FFFD (newline and tab are kept).
    public static func escape(_ text: String) -> String {
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
}
