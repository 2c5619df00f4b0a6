import ControlRPC
import RegcodeSupport

/// The devices: list them, look at one, add, remove and reset them.
extension ControlMethods {
    static let devices: [ControlMethod] = [
        ControlMethod(
            "devices.list",
            "Every device: state, code and expiry, polls, last poll, fleet and last outcome.",
            result: "{devices: [{device, fleet, state, code, expires, polls, lastHttpStatus, lastPoll, mvpd, verificationUri, lastOutcome}]}"
        ) { handler, _ throws(RPCError) in try await handler.devicesList() },
        ControlMethod(
            "devices.get",
            "One device in detail.",
            parameters: [.device],
            result: "the devices.list fields plus identity, tokens and profile"
        ) { handler, params throws(RPCError) in try await handler.deviceDetail(try params.string("device")) },
        ControlMethod(
            "devices.add",
            "Adds a device modelled on a fleet and starts it.",
            parameters: [
                .device,
                ControlParameter("fleet", .string, "Fleet to model it on (default: the first)."),
                ControlParameter("requestor", .string, "Requestor id."),
                ControlParameter("profile", .string, "v2 or v1."),
                ControlParameter("persona", .string, "accessenabler (an AccessEnabler SDK app) or rest-v2 (an app calling REST API v2 itself)."),
                ControlParameter(
                    "protocol",
                    .string,
                    "adobe-pass, or oauth-device (the OAuth 2.0 device grant, with the fleet's oauth client and endpoints)."
                ),
                ControlParameter("mvpd", .string, "MVPD to pick."),
                ControlParameter("scenario", .string, "login, idle or cycle."),
                ControlParameter(
                    "login",
                    .object,
                    "Options of the login and cycle scenarios: {provider: regular|temppass, tempPassEmail} (what the picker picks)."
                ),
            ],
            result: "the devices.get answer"
        ) { handler, params throws(RPCError) in try await handler.addDevice(params) },
        ControlMethod("devices.remove", "Stops and forgets a device.", parameters: [.device], result: "{device, removed}") {
            handler,
            params throws(RPCError) in
            try await handler.removeDevice(try params.string("device"))
        },
        ControlMethod(
            "devices.reset",
            "Forgets what the device learned, keeps its identity, starts again.",
            parameters: [.device],
            result: "{device, reset}"
        ) { handler, params throws(RPCError) in try await handler.resetDevice(try params.string("device")) },
    ]
}
