import AccessEnablerAPI
import ControlRPC
import DeviceRegistry
import Foundation
import RegcodeEngine
import RegcodeSupport

/// The AccessEnabler calls: they keep their names (``DeviceCommand/Name``), take `device` (and `app` on a device that
/// hosts several), and answer at once; the callbacks they cause arrive as `event` notifications.
extension ControlMethods {
    static let accessEnablerCalls: [ControlMethod] = [
        .accessEnabler(
            .setRequestor,
            "AccessEnabler setRequestor: loads the requestor's configuration (registers the device first if needed).",
            [
                ControlParameter("requestor", .string, "Must match the device's configured requestor."),
                ControlParameter("secret", .string, "Legacy v1 signing secret (with publicKey); kept in memory only."),
                ControlParameter("publicKey", .string, "Legacy v1 public key (with secret)."),
            ]
        ) { params, settings throws(RPCError) in
            if let requestor = try params.optionalString("requestor"), requestor != settings.requestor {
                let device = try params.string("device")
                throw .invalidParams(
                    "device '\(device)' is configured for requestor '\(settings.requestor)'",
                    data: ["requestor": .string(settings.requestor)]
                )
            }
            return .setRequestor(signingKeys: try signingKeys(params))
        },
        .accessEnabler(
            .setOptions,
            "AccessEnabler setOptions.",
            [ControlParameter("options", .stringMap, required: true, "visitorID, device_info (base64 JSON), applicationProfile, handleSVC.")]
        ) { params, _ throws(RPCError) in
            let options = try params.stringMap("options") ?? [:]
            let known: Set<String> = ["visitorID", "device_info", "applicationProfile", "handleSVC"]
            if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
                throw .invalidParams("unknown option '\(unknown)'", data: ["allowed": .array(known.sorted().map { .string($0) })])
            }
            if let info = options["device_info"], Data(base64Encoded: info) == nil {
                throw .invalidParams("'device_info' must be base64-encoded JSON")
            }
            return .setOptions(options)
        },
        .accessEnabler(.checkAuthentication, "AccessEnabler checkAuthentication: answers from the stored profile.") { _, _ in
            .checkAuthentication
        },
        .accessEnabler(
            .getAuthentication,
            "AccessEnabler getAuthentication: the provider picker, then a registration code and polling.",
            [ControlParameter("mvpd", .string, "Select this MVPD without the picker.")]
        ) { params, _ throws(RPCError) in .getAuthentication(mvpd: try params.optionalString("mvpd")) },
        .accessEnabler(
            .setSelectedProvider,
            "AccessEnabler setSelectedProvider: answers the picker; null cancels.",
            [ControlParameter("mvpd", .nullableString, required: true, "An MVPD id, or null to cancel.", hint: "an MVPD id, or null to cancel")]
        ) { params, _ throws(RPCError) in .setSelectedProvider(try params.optionalString("mvpd")) },
        .accessEnabler(.getSelectedProvider, "AccessEnabler getSelectedProvider.") { _, _ in .getSelectedProvider },
        .accessEnabler(.checkAuthorization, "AccessEnabler checkAuthorization.", [resource]) { params, _ throws(RPCError) in
            .checkAuthorization(resource: try params.string("resource"))
        },
        .accessEnabler(.getAuthorization, "AccessEnabler getAuthorization: a decision and a media token.", [resource]) {
            params,
            _ throws(RPCError) in
            .getAuthorization(resource: try params.string("resource"))
        },
        .accessEnabler(
            .checkPreauthorizedResources,
            "AccessEnabler checkPreauthorizedResources.",
            [ControlParameter("resources", .strings, required: true, "Resource ids.", hint: "an array of resource ids")]
        ) { params, _ throws(RPCError) in
            let resources = try params.optionalStrings("resources") ?? []
            if resources.contains(where: \.isEmpty) {
                throw .invalidParams("'resources' must not contain empty ids", data: ["member": "resources"])
            }
            return .checkPreauthorizedResources(resources)
        },
        .accessEnabler(
            .getMetadata,
            "AccessEnabler getMetadata.",
            [
                ControlParameter("key", .object, "{opCode, resource_id?, user_metadata_name?}; or give them at the top level."),
                ControlParameter("opCode", .integer, "0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata."),
                ControlParameter("resource_id", .string, "For opCode 1."),
                ControlParameter("user_metadata_name", .string, "For opCode 3."),
            ]
        ) { params, _ throws(RPCError) in .getMetadata(try metadataKey(params)) },
        .accessEnabler(.logout, "AccessEnabler logout.") { _, _ in .logout },
    ]

    private static let resource = ControlParameter("resource", .string, required: true, "Resource id, e.g. REF30.")

    /// The legacy `setRequestor(…secret:publicKey:)` keys: both or neither. They go to the device's memory
    /// only and are never echoed, logged or stored.
    static func signingKeys(_ params: RPCParams) throws(RPCError) -> SigningKeys? {
        let secret = try params.optionalString("secret")
        let publicKey = try params.optionalString("publicKey")
        switch (secret, publicKey) {
        case (nil, nil): return nil
        case (let secret?, let publicKey?): return SigningKeys(publicKey: publicKey, secret: secret)
        default: throw .invalidParams("'secret' and 'publicKey' go together: give both or neither", data: ["members": ["secret", "publicKey"]])
        }
    }

    /// The `getMetadata:` key dictionary, from `key` or from the same members at the top level (not both).
    /// Opcodes 0–3; 1 needs `resource_id`, 3 needs `user_metadata_name`.
    static func metadataKey(_ params: RPCParams) throws(RPCError) -> JSONValue {
        let members: Set<String> = ["opCode", "resource_id", "user_metadata_name"]
        let key: RPCParams
        if let nested = params.object["key"], nested != .null {
            if let stray = params.object.keys.sorted().first(where: members.contains) {
                throw .invalidParams("give '\(stray)' inside 'key' or at the top level, not both", data: ["member": .string(stray)])
            }
            key = try RPCParams(nested)
            try key.allowOnly(members)
        } else {
            key = try RPCParams(.object(params.object.filter { members.contains($0.key) }))
        }
        guard let opCode = try key.optionalInt("opCode") else {
            throw .invalidParams("missing 'opCode' (0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata)", data: ["member": "opCode"])
        }
        switch AccessEnabler.MetadataOpCode(rawValue: opCode) {
        case nil:
            throw .invalidParams("unknown opCode \(opCode): 0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata", data: ["member": "opCode"])
        case .authorizationTTL:
            _ = try key.string("resource_id")
        case .userMetadata:
            _ = try key.string("user_metadata_name")
        case .authenticationTTL, .deviceID:
            break
        }
        // Echoed back as given (setMetadataStatus `arguments`), so keep the caller's values.
        return .object(key.object)
    }
}

extension ControlMethod {
    /// An AccessEnabler call named after its device command: takes `device`, `app` and `parameters`; `command` builds
    /// the command from the checked parameters and the device's settings.
    static func accessEnabler(
        _ name: DeviceCommand.Name,
        _ summary: String,
        _ parameters: [ControlParameter] = [],
        command: @escaping @Sendable (RPCParams, DeviceSettings) throws(RPCError) -> DeviceCommand
    ) -> ControlMethod {
        ControlMethod(
            name.rawValue,
            summary,
            parameters: [.device, .app] + parameters,
            result: "{device, app?, accepted, state}; the callbacks arrive as events",
            tag: "AccessEnabler"
        ) { handler, params throws(RPCError) in
            try await handler.sendDeviceCalls(params) { params, settings throws(RPCError) in
                try ControlMethod.refuseOAuthDevice(params, settings)
                return [try command(params, settings)]
            }
        }
    }
}

extension ControlMethodsHandler {
    /// Sends the calls (an AccessEnabler call, or a native app verb's) to the device's app, in order, and answers
    /// with the state it is in; unknown devices and apps answer 1001 and -32602 before the method's own parameters
    /// are read.
    func sendDeviceCalls(
        _ params: RPCParams,
        commands: (RPCParams, DeviceSettings) throws(RPCError) -> [DeviceCommand]
    ) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let app = try params.optionalString("app")
        let settings: DeviceSettings
        do {
            settings = try await context.devices.settings(of: device, app: app)
        } catch {
            throw Self.rpcError(error)
        }
        let calls = try commands(params, settings)
        do {
            for call in calls { try await context.devices.call(call, device: device, app: app) }
        } catch {
            throw Self.rpcError(error)
        }
        let phase = await context.devices.phase(of: device, app: app)
        var answer: [String: JSONValue] = ["device": .string(device), "accepted": true, "state": phase.map { .string($0.rawValue) } ?? .null]
        if let app { answer["app"] = .string(app) }
        return .object(answer)
    }
}
