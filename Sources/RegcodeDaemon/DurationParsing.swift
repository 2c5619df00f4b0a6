import Foundation
import RegcodeEngine

/// Parses durations as configs and flags write them: `5`, `2.5`, `500ms`, `5s`, `2m`, `1h`, `7d`.
public enum DurationParser {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { return nil }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            // "ms" must not be read as minutes of "…m" + "s".
            if suffix == "s", number.hasSuffix("m") { continue }
            guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
            return .milliseconds(Int64((value * scale * 1000).rounded()))
        }
        guard let value = Double(trimmed), value.isFinite, value >= 0 else { return nil }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    /// Renders a duration the way `parse` reads it back.
    public static func format(_ duration: Duration) -> String {
        let ms = duration.milliseconds
        if ms % 86_400_000 == 0 && ms > 0 { return "\(ms / 86_400_000)d" }
        if ms % 3_600_000 == 0 && ms > 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0 && ms > 0 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}
