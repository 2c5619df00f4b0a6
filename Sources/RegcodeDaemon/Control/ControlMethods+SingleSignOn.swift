import ControlRPC
import RegcodeSupport

/// Single sign-on between the apps of a device: its apps, why an app shares (or not) a login, what its storage holds.
extension ControlMethods {
    static let singleSignOn: [ControlMethod] = [
        ControlMethod("apps.list", "The apps a device hosts.", parameters: [.device], result: "{device, apps: [...]}") {
            handler,
            params throws(RPCError) in
            try await handler.appsList(try params.string("device"))
        },
        ControlMethod(
            "apps.reinstall",
            "Reinstalls an app (its vendor's device id changes).",
            parameters: [.device, .app],
            result: "{device, app, ...}"
        ) { handler, params throws(RPCError) in
            try await handler.reinstallApp(try params.string("device"), app: try params.string("app"))
        },
        ControlMethod(
            "sso.explain",
            "Why an app shares (or not) another app's login.",
            parameters: [.device, .app],
            result: "{domain, deviceId, used, ...}"
        ) { handler, params throws(RPCError) in
            try await handler.explain(try params.string("device"), app: try params.optionalString("app"))
        },
        ControlMethod(
            "storage.list",
            "A device's shared token storage (metadata only).",
            parameters: [.device, ControlParameter("domain", .string, "Only this storage domain.")],
            result: "{device, tokens: [...]}"
        ) { handler, params throws(RPCError) in
            try await handler.storageList(try params.string("device"), domain: try params.optionalString("domain"))
        },
    ]
}
