import ControlRPC
import RegcodeSupport

/// `vsa.*`: the lab's hand on a device's Apple TV Provider (video subscriber account).
extension ControlMethods {
    static let tvProvider: [ControlMethod] = [
        ControlMethod("vsa.status", "The device's Apple TV Provider state.", parameters: [.device], result: "{device, account, access, ...}") {
            handler,
            params throws(RPCError) in
            try await handler.tvProviderStatus(try params.string("device"))
        },
        ControlMethod(
            "vsa.signIn",
            "Signs the device's TV Provider account in.",
            parameters: [
                .device,
                ControlParameter("provider", .string, required: true, "MVPD id."),
                ControlParameter("userId", .string, "User id."),
                ControlParameter("householdId", .string, "Household id."),
                ControlParameter("zip", .string, "Zip code."),
                ControlParameter("expires", .integer, "Expiry, epoch ms."),
            ],
            result: "the vsa.status answer"
        ) { handler, params throws(RPCError) in try await handler.tvProviderSignIn(params) },
        ControlMethod("vsa.signOut", "Signs the TV Provider account out.", parameters: [.device], result: "the vsa.status answer") {
            handler,
            params throws(RPCError) in
            try await handler.tvProviderUpdate(try params.string("device")) { $0.account = .signedOut }
        },
        ControlMethod(
            "vsa.setAccess",
            "Sets an app's TV Provider permission.",
            parameters: [.device, .app, ControlParameter("access", .string, required: true, "granted, denied or undetermined.")],
            result: "the vsa.status answer"
        ) { handler, params throws(RPCError) in try await handler.tvProviderSetAccess(params) },
        ControlMethod(
            "vsa.injectFault",
            "Makes the TV Provider fail.",
            parameters: [
                .device,
                ControlParameter("kind", .nullableString, required: true, "A fault kind, or null to clear."),
                ControlParameter("once", .boolean, "Only for the next request."),
            ],
            result: "the vsa.status answer"
        ) { handler, params throws(RPCError) in try await handler.tvProviderInjectFault(params) },
        ControlMethod(
            "vsa.pick",
            "Answers an open TV Provider picker.",
            parameters: [
                .device, .app,
                ControlParameter("provider", .string, "Pick this provider."),
                ControlParameter("other", .boolean, "Choose \"Other TV Provider\"."),
                ControlParameter("cancel", .boolean, "Cancel the picker."),
            ],
            result: "{device, app, ...}"
        ) { handler, params throws(RPCError) in try await handler.tvProviderPick(params) },
    ]
}
