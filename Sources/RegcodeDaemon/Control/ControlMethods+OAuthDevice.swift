import ControlRPC
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// The lab's verbs for an OAuth device (`protocol: oauth-device`): what a person does with the TV, not SDK calls.
/// They answer at once; what follows arrives as `oauth.…` events.
extension ControlMethods {
    static let oauthDeviceVerbs: [ControlMethod] = [
        .oauthDevice(
            "oauth.login",
            "Starts a device login (RFC 8628): the device authorization request, the code shown (oauth.codeShown), then polling; ignored while one runs or tokens are held."
        ) { .getAuthentication(mvpd: nil) },
        .oauthDevice("oauth.cancel", "Ends a running login without tokens (the user backs out of the code screen).") { .setSelectedProvider(nil) },
        .oauthDevice("oauth.logout", "Signs out: revokes the tokens (RFC 7009) where the provider can, then forgets them.") { .logout },
    ]
}

extension ControlMethod {
    /// A verb of an OAuth device: refused on an Adobe Pass device.
    static func oauthDevice(_ name: String, _ summary: String, command: @escaping @Sendable () -> DeviceCommand) -> ControlMethod {
        ControlMethod(
            name,
            summary,
            parameters: [.device],
            result: "{device, accepted, state}; what follows arrives as oauth.… events",
            tag: "OAuth device"
        ) { handler, params throws(RPCError) in
            try await handler.sendDeviceCalls(params) { params, settings throws(RPCError) in
                guard settings.oauth != nil else {
                    throw .invalidParams(
                        "device '\(try params.string("device"))' is an Adobe Pass device: drive it with its \(settings.persona == .restV2 ? "app.… verbs" : "AccessEnabler calls")",
                        data: ["protocol": .string(settings.deviceProtocol.rawValue)]
                    )
                }
                return [command()]
            }
        }
    }

    /// Adobe Pass calls and verbs are refused on an OAuth device, which would ignore them.
    static func refuseOAuthDevice(_ params: RPCParams, _ settings: DeviceSettings) throws(RPCError) {
        guard settings.oauth != nil else { return }
        throw .invalidParams(
            "device '\(try params.string("device"))' is an OAuth device: drive it with oauth.login, oauth.cancel and oauth.logout",
            data: ["protocol": .string(settings.deviceProtocol.rawValue)]
        )
    }
}
