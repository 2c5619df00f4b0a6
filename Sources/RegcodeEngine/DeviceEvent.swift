import RegcodeSupport

/// One AccessEnabler callback fired by a device: `name` is the callback, `args` its parameters
/// under their AccessEnabler names.
public struct DeviceEvent: Sendable, Equatable {
    public var name: String
    public var args: [String: JSONValue]

    public init(name: String, args: [String: JSONValue]) {
        self.name = name
        self.args = args
    }
}

extension DeviceEvent {
    public static func setRequestorComplete(_ status: Int64) -> DeviceEvent {
        DeviceEvent(name: "setRequestorComplete", args: ["status": .int(status)])
    }

    public static func setAuthenticationStatus(_ status: Int64, _ errorCode: String) -> DeviceEvent {
        DeviceEvent(name: "setAuthenticationStatus", args: ["status": .int(status), "errorCode": .string(errorCode)])
    }

    public static func displayProviderDialog(_ mvpds: [MVPD]) -> DeviceEvent {
        DeviceEvent(name: "displayProviderDialog", args: ["mvpds": .array(mvpds.map(\.jsonValue))])
    }

    public static func selectedProvider(_ mvpd: MVPD?) -> DeviceEvent {
        DeviceEvent(name: "selectedProvider", args: ["mvpd": mvpd?.jsonValue ?? .null])
    }

    /// The advanced-status callback (`status:`); `statusDictionary` keys as iOS sends them.
    public static func status(
        errorId: String,
        level: String,
        message: String? = nil,
        extra: [String: JSONValue] = [:]
    ) -> DeviceEvent {
        var dictionary: [String: JSONValue] = ["errorId": .string(errorId), "level": .string(level)]
        if let message { dictionary["message"] = .string(message) }
        for (key, value) in extra { dictionary[key] = value }
        return DeviceEvent(name: "status", args: ["statusDictionary": .object(dictionary)])
    }

    public static func sendTrackingData(_ event: AccessEnabler.TrackingEvent, _ data: [String]) -> DeviceEvent {
        DeviceEvent(
            name: "sendTrackingData",
            args: ["event": .int(event.rawValue), "eventName": .string(event.name), "data": .array(data.map { .string($0) })]
        )
    }

    public static func setToken(_ token: String, resource: String) -> DeviceEvent {
        DeviceEvent(name: "setToken", args: ["token": .string(token), "resource": .string(resource)])
    }

    public static func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) -> DeviceEvent {
        DeviceEvent(
            name: "tokenRequestFailed",
            args: ["resource": .string(resource), "errorCode": .string(errorCode), "errorDescription": .string(errorDescription)]
        )
    }

    public static func preauthorizedResources(_ resources: [String]) -> DeviceEvent {
        DeviceEvent(name: "preauthorizedResources", args: ["resources": .array(resources.map { .string($0) })])
    }

    /// `setMetadataStatus:encrypted:forKey:andArguments:`; `arguments` is the key dictionary as the app passed it.
    public static func setMetadataStatus(_ metadata: JSONValue, encrypted: Bool, key: Int64, arguments: JSONValue) -> DeviceEvent {
        DeviceEvent(
            name: "setMetadataStatus",
            args: ["metadata": metadata, "encrypted": .bool(encrypted), "key": .int(key), "arguments": arguments]
        )
    }

    /// For `status` events, the `errorId` of the dictionary.
    public var statusErrorID: String? {
        args["statusDictionary"]?["errorId"]?.stringValue
    }
}

extension MVPD {
    /// The MVPD as AccessEnabler's picker objects describe it (`ID`, `displayName`, `logoURL`).
    public var jsonValue: JSONValue {
        ["ID": .string(id), "displayName": .string(displayName), "logoURL": logoURL.map(JSONValue.string) ?? .null]
    }
}
