import ControlRPC
import RegcodeEngine
import RegcodeSupport

/// The lab's verbs for a native REST v2 app (`persona: rest-v2`): what a person does with the app, not SDK calls.
/// They answer at once; the app states they cause arrive as `app.…` events.
extension ControlMethods {
    static let nativeAppVerbs: [ControlMethod] = [
        .nativeApp("app.launch", "Opens the app: registers once, then the launch check (GET /profiles, or /profiles/{mvpd} with a known MVPD).") {
            _ throws(RPCError) in [DeviceCommand.setRequestor(signingKeys: nil)]
        },
        .nativeApp(
            "app.login",
            "Signs in on a second screen: with an MVPD, a code for it; without one, the provider picker (its MVPD list loaded only now, and cached).",
            [ControlParameter("mvpd", .string, "Sign in with this MVPD, skipping the picker.")]
        ) { params throws(RPCError) in [.getAuthentication(mvpd: try params.optionalString("mvpd"))] },
        .nativeApp(
            "app.pick",
            "Picks an MVPD in the provider picker the app shows (app.providerPicker); null closes it.",
            [ControlParameter("mvpd", .nullableString, required: true, "An MVPD id, or null to close the picker.", hint: "an MVPD id, or null")]
        ) { params throws(RPCError) in [.setSelectedProvider(try params.optionalString("mvpd"))] },
        .nativeApp(
            "app.play",
            "Plays a resource: one authorization decision (POST decisions/authorize); signs in first when signed out.",
            [ControlParameter("resource", .string, required: true, "The resource id.")]
        ) { params throws(RPCError) in [.getAuthorization(resource: try params.string("resource"))] },
        .nativeApp(
            "app.browse",
            "Shows a catalogue page: preauthorizes its resources (POST decisions/preauthorize).",
            [ControlParameter("resources", .strings, required: true, "Resource ids.", hint: "an array of resource ids")]
        ) { params throws(RPCError) in
            let resources = try params.optionalStrings("resources") ?? []
            guard !resources.isEmpty, !resources.contains(where: \.isEmpty) else {
                throw .invalidParams("'resources' must be a non-empty array of non-empty ids", data: ["member": "resources"])
            }
            return [.checkPreauthorizedResources(resources)]
        },
        .nativeApp("app.logout", "Signs out when the user asks: GET /logout/{mvpd}.") { _ throws(RPCError) in [DeviceCommand.logout] },
    ]
}

extension ControlMethod {
    /// A verb of a native app: refused on a device of another persona, whose app is driven by its own calls.
    static func nativeApp(
        _ name: String,
        _ summary: String,
        _ parameters: [ControlParameter] = [],
        commands: @escaping @Sendable (RPCParams) throws(RPCError) -> [DeviceCommand]
    ) -> ControlMethod {
        ControlMethod(
            name,
            summary,
            parameters: [.device, .app] + parameters,
            result: "{device, app?, accepted, state}; the app states arrive as app.… events",
            tag: "Native app"
        ) { handler, params throws(RPCError) in
            try await handler.sendDeviceCalls(params) { params, settings throws(RPCError) in
                try ControlMethod.refuseOAuthDevice(params, settings)
                guard settings.persona == .restV2 else {
                    throw .invalidParams(
                        "device '\(try params.string("device"))' is an \(settings.persona.rawValue) app: drive it with its AccessEnabler calls",
                        data: ["persona": .string(settings.persona.rawValue)]
                    )
                }
                return try commands(params)
            }
        }
    }
}
