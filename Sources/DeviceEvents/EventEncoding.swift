import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeSupport

/// How stored events look on the socket: the `params` of an `event` notification.
package enum EventEncoding {
    package static func params(_ event: StoredEvent) -> JSONValue {
        [
            "seq": .int(event.seq),
            "time": .string(timestamp(event.time)),
            "device": .string(event.device),
            "app": .string(event.app),
            "name": .string(event.name),
            "args": .object(event.args),
        ]
    }

    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// `2026-11-21T10:00:00.123Z`.
    package static func timestamp(_ epochMs: Int64) -> String {
        Date(timeIntervalSince1970: Double(epochMs) / 1000).formatted(style)
    }
}
