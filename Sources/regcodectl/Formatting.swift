import AccessEnablerAPI
import Foundation
import RegcodeEngine
import RegcodeSupport

enum JSONText {
    static func compact(_ value: JSONValue) -> String {
        JSONWriter.text(value)
    }

    static func pretty(_ value: JSONValue) -> String {
        var writer = JSONWriter(layout: .indented(2))
        writer.value(value)
        return writer.text
    }
}

/// One readable line per event, times in UTC: `#42 10:00:00.123Z stb-1 status REGCODE [success] X7K2Q9P
/// (expires 2026-11-21T10:30:00Z)`; an event of an app other than a plain device's `main` names it:
/// `#43 10:00:01.000Z sso-1/B setRequestorComplete status=1`.
enum EventLine {
    static func render(_ params: JSONValue) -> String {
        let seq = params["seq"]?.intValue.map { "#\($0)" } ?? "#?"
        let time = params["time"]?.stringValue.map(UTCTime.clock(iso:)) ?? ""
        var device = params["device"]?.stringValue ?? "?"
        // Apps of a device that hosts several: `sso-1/B`; a plain device's one app stays implicit.
        if let app = params["app"]?.stringValue, app != DeviceStep.defaultApp { device += "/\(app)" }
        let name = params["name"]?.stringValue ?? "?"
        let args = params["args"] ?? [:]
        return "\(seq) \(time) \(device) \(name) \(describe(name: name, args: args))"
    }

    static func describe(name: String, args: JSONValue) -> String {
        switch Callback(rawValue: name) {
        case .status:
            let dictionary = args["statusDictionary"] ?? [:]
            var text = "\(dictionary["errorId"]?.stringValue ?? "?") [\(dictionary["level"]?.stringValue ?? "?")]"
            if let message = dictionary["message"]?.stringValue { text += " \(message)" }
            if let expires = dictionary["expires"]?.intValue { text += " (expires \(clock(expires)))" }
            return text
        case .setAuthenticationStatus:
            let status = args["status"]?.intValue ?? -1
            let code = args["errorCode"]?.stringValue ?? ""
            return code.isEmpty ? "status=\(status)" : "status=\(status) \"\(code)\""
        case .setRequestorComplete:
            return "status=\(args["status"]?.intValue ?? -1)"
        case .displayProviderDialog:
            let ids = args["mvpds"]?.arrayValue?.compactMap { $0["ID"]?.stringValue } ?? []
            return "[\(ids.joined(separator: ", "))]"
        case .sendTrackingData:
            let data = args["data"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return "\(args["eventName"]?.stringValue ?? "?") [\(data.joined(separator: ", "))]"
        default:
            return JSONText.compact(args)
        }
    }

    /// `2026-11-21T10:30:00Z`.
    static func clock(_ epochMs: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(epochMs) / 1000)
        return date.formatted(
            Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(
                .colon
            ).timeZone(separator: .omitted)
        )
    }
}
