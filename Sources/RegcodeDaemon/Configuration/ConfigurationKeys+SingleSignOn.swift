import DeviceRegistry
import RegcodeEngine
import RegcodeSupport
import Yams

/// A fleet's `tv_provider:` while it is read: the account is assembled from `provider` and the user's keys at the end.
struct TVProviderDraft {
    var device = TVProviderDevice()
    var provider: String?
    var user = TVProviderUser(userID: "tv-provider-user")

    /// The device's TV Provider. A configured account does not expire on its own; the lab signs it out
    /// (vsa.signOut) or sets an expiry (vsa.signIn).
    var assembled: TVProviderDevice {
        var device = device
        if let provider { device.account = TVProviderAccount(providerID: provider, user: user, expiresEpochMs: Int64.max) }
        return device
    }
}

/// One entry of `apps:` while it is read: `bundle_id` and `team_id` are required, `id` defaults to the bundle id.
struct AppDraft {
    var id: String?
    var bundleId: String?
    var teamId: String?
    var app = AppConfiguration(id: "", bundleId: "", teamId: "")

    /// The app, or the refusal naming the key that is missing or wrong.
    func app(at prefix: String, _ reader: ConfigurationReader) throws(ConfigurationError) -> AppConfiguration {
        guard let bundleId, !bundleId.isEmpty else { throw reader.fail("\(prefix).bundle_id", "missing") }
        guard let teamId, !teamId.isEmpty else { throw reader.fail("\(prefix).team_id", "missing") }
        var app = app
        app.bundleId = bundleId
        app.teamId = teamId
        app.id = id ?? bundleId
        guard app.id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw reader.fail("\(prefix).id", "'\(app.id)' must be letters, digits, '-', '_' or '.'")
        }
        return app
    }
}

/// The single sign-on sections of a fleet: `device`, `tv_provider`, `sso_identity`, `apps[]`.
extension ConfigurationKeys {
    /// `device:`, what the devices of a fleet are.
    static let device: [ConfigurationKey<DeviceSSOSettings>] = [
        .custom(
            "platform",
            .choice(["tvos", "ios"]),
            "The devices' OS: `tvos`, or `ios` (which shows no code but a login page, as the iOS AccessEnabler does).",
            default: { $0.platform.family.rawValue },
            read: { settings, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path).lowercased()
                guard let family = DevicePlatform.Family(rawValue: text) else { throw reader.fail(path, "'\(text)' is not tvos or ios") }
                settings.platform.family = family
            }
        ),
        .custom(
            "os_version",
            .text("version such as `17.0`"),
            "The OS version the single sign-on rules follow (quote it).",
            default: { $0.platform.osVersion.description },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.platform.osVersion = try reader.version(node, path)
            }
        ),
        .choice(
            "storage_scope",
            \.storage.scope,
            "Where apps keep their tokens: `auto` (the platform's rules), or `app`, `team`, `global` (lab overrides, not faithful).",
            ignoringCase: true
        ),
        .bool("ad_hoc_private", \.storage.adHocPrivate, "Apps not installed from the App Store keep a private domain."),
    ]

    /// `tv_provider:`, the TV Provider (Apple single sign-on) each device starts with.
    static let tvProvider: [ConfigurationKey<TVProviderDraft>] = [
        .optionalString("provider", \.provider, "The provider signed in at start.", none: "signed out"),
        .string("user_id", \.user.userID, "The signed-in user's id."),
        .custom(
            "household_id",
            .string,
            "The signed-in user's household id.",
            default: { $0.user.householdID ?? "none" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.user.householdID = try reader.string(node, path)
            }
        ),
        .custom(
            "zip",
            .string,
            "The signed-in user's ZIP code.",
            default: { $0.user.zip ?? "none" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.user.zip = try reader.string(node, path)
            }
        ),
        .choice("access", \.device.defaultAccess, "Every app's TV Provider permission at start."),
        .custom(
            "picker_answer",
            .text("`wait`, `first`, a provider id, `other` or `cancel`"),
            "How the scenario answers Apple's picker; `wait`: the lab answers (`vsa.pick`).",
            default: { draft in
                switch draft.device.pickerAnswer {
                case nil: "wait"
                case .first: "first"
                case .provider(let id): id
                case .other: "other"
                case .cancel: "cancel"
                }
            },
            read: { draft, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path)
                draft.device.pickerAnswer = text == "wait" ? nil : TVProviderDevice.PickerAnswer(text)
            }
        ),
    ]

    /// `sso_identity:`, the REST v2 single sign-on identities (sso.md §3.3); null or empty users mean none.
    static let ssoIdentity: [ConfigurationKey<SSOIdentitySettings>] = [
        .custom(
            "platform_user",
            .optionalString,
            "The platform user whose identity token is sent as `Adobe-Subject-Token`.",
            default: { $0.platformUser ?? "none" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.platformUser = try reader.optionalString(node, path).flatMap { $0.isEmpty ? nil : $0 }
            }
        ),
        .bool("roku_header", \.rokuHeader, "Send the platform identity as Roku's `X-Roku-Reserved-Roku-Connect-Token` instead."),
        .custom(
            "service_user",
            .optionalString,
            "The user whose service token is sent as `AD-Service-Token`.",
            default: { $0.serviceUser ?? "none" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.serviceUser = try reader.optionalString(node, path).flatMap { $0.isEmpty ? nil : $0 }
            }
        ),
    ]

    /// One entry of `apps:`.
    static let app: [ConfigurationKey<AppDraft>] = [
        .custom(
            "id",
            .string,
            "The app's id on the device, as socket calls name it.",
            default: { $0.id ?? "the bundle id" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.id = try reader.string(node, path)
            }
        ),
        .custom(
            "bundle_id",
            .string,
            "The app's bundle id (required).",
            default: { $0.bundleId ?? "required" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.bundleId = try reader.string(node, path)
            }
        ),
        .custom(
            "team_id",
            .string,
            "The app's team id (required).",
            default: { $0.teamId ?? "required" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.teamId = try reader.string(node, path)
            }
        ),
        .custom(
            "requestor",
            .string,
            "The app's requestor.",
            default: { $0.app.requestor ?? "the fleet's" },
            read: {
                draft,
                node,
                path,
                reader throws(ConfigurationError) in
                draft.app.requestor = try reader.string(node, path)
            }
        ),
        .custom(
            "access_enabler",
            .text("version such as `3.9.2`"),
            "The AccessEnabler SDK version the single sign-on rules follow (quote it).",
            default: { $0.app.accessEnabler.description },
            read: { draft, node, path, reader throws(ConfigurationError) in
                draft.app.accessEnabler = try reader.version(node, path)
            }
        ),
        .choice("install_source", \.app.installSource, "Where the app was installed from; other than `appStore` groups IDFVs by bundle id prefix."),
    ]
}
