import DeviceRegistry
import RegcodeEngine
import RegcodeSupport
import Yams

/// The keys of a fleet (`fleets[]`, and `defaults` without `name` and `count`).
extension ConfigurationKeys {
    typealias FleetKey = ConfigurationKey<FleetConfiguration>

    static let fleet: [FleetKey] = [
        FleetKey.string("name", \.name, "The fleet's name: its devices are `name-1` … `name-N`.").onlyInFleets,
        FleetKey.int("count", \.count, 0...100_000, "Number of devices in the fleet.").onlyInFleets,
        .string("requestor", \.requestor, "Requestor id (service provider) of the fleet's devices."),
        .custom(
            "profile",
            .choice(APIProfile.allCases.map(\.rawValue)),
            "API profile: `v2`, or `v1` (past Adobe's end of support, 2025-12-31; end of life at the end of 2026).",
            default: { $0.profile.rawValue },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path)
                guard let profile = APIProfile(rawValue: text.lowercased()) else { throw reader.fail(path, "'\(text)' is not v2 or v1") }
                fleet.profile = profile
            }
        ),
        .choice(
            "persona",
            \.persona,
            "What kind of app the devices are: `accessenabler` (an AccessEnabler SDK app, callbacks) or `rest-v2` (an app calling REST API v2 itself, app states; see docs/explanation/personas.md).",
            ignoringCase: true
        ),
        .choice(
            "protocol",
            \.deviceProtocol,
            "How the devices log in: `adobe-pass` (Adobe's registration code, by `profile` and `persona`) or `oauth-device` (the OAuth 2.0 device authorization grant, RFC 8628, configured by `oauth`; see docs/explanation/oauth-device.md).",
            ignoringCase: true
        ),
        .section("oauth", "An `oauth-device` fleet's client and endpoints.", oauth, at: \.oauth),
        .optionalString("mvpd", \.mvpd, "Preset MVPD (skips the provider picker).", none: "none (the picker)"),
        .choice(
            "scenario",
            \.scenario,
            "`login` (log in once), `idle` (only socket commands) or `cycle` (log in, hold, authorize, log out, again).",
            ignoringCase: true
        ),
        .optionalString(
            "software_statement_file",
            \.softwareStatementFile,
            "DCR software statement file (read at start and on reload).",
            none: "none (the in-process simulator signs one)"
        ),
        .optionalString("public_key", \.publicKey, "Legacy v1 signed-header public key (with `signing_secret_file`)."),
        .optionalString("signing_secret_file", \.signingSecretFile, "File with the secret of `public_key`."),
        .custom(
            "poll",
            .mapping,
            "Timing of the fleet's polls and retries; a `preset` sets a baseline the other keys refine, whatever their order.",
            default: { _ in "" },
            read: readPoll
        ).opening(poll, defaults: PollSettings(policy: FleetConfiguration().poll)),
        .optionalDuration("ramp", \.ramp, "Start the fleet's devices evenly over this long instead of all at once.", none: "all at once"),
        .custom(
            "connections",
            .text("`shared`, `shared N` (1…100000), `per-device` or `per-request`"),
            "How the devices' calls reach the backend over TCP: the common pool, a pool of the fleet's own, one connection per device, or one per call.",
            default: { fleet in
                switch fleet.connections {
                case .common: "shared"
                case .shared(let count): "shared \(count)"
                case .perDevice: "per-device"
                case .perRequest: "per-request"
                }
            },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                let text = try reader.string(node, path)
                guard let connections = FleetConnections(parsing: text) else {
                    throw reader.fail(path, "'\(text)' is not shared, shared N (1…100000), per-device or per-request")
                }
                fleet.connections = connections
            }
        ),
        .string("domain_name", \.identity.domainName, "v2 sessions `domainName`: a domain registered for the requestor."),
        .string("redirect_url", \.identity.redirectURL, "v2 sessions and logout `redirectUrl`: where the second-screen browser lands."),
        .string("client_redirect_uri", \.identity.clientRedirectURI, "DCR `redirect_uri` sent with the software statement."),
        .optionalString(
            "user_agent",
            \.identity.userAgent,
            "`User-Agent` of every call.",
            none: "the persona's: the AccessEnabler SDK's, or a native app's HTTP stack"
        ),
        .custom(
            "client_address",
            .text("a mode, or a mapping of `mode` and `addresses`"),
            "Which address the backend sees the devices' calls come from.",
            default: { $0.clientAddress.mode?.rawValue ?? "bind on a loopback backend, else host" },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                fleet.clientAddress = ClientAddressConfiguration()
                guard node.mapping != nil else {
                    fleet.clientAddress.mode = try reader.choice(node, path)
                    return
                }
                try reader.apply(clientAddress, node, prefix: path, to: &fleet.clientAddress)
            }
        ).opening(clientAddress, defaults: ClientAddressConfiguration()),
        .custom(
            "forwarded_for",
            .refused,
            "Replaced by `client_address: forwarded-for` (was true) or `client_address: host` (was false).",
            default: { _ in "" },
            read: { _, _, path, reader throws(ConfigurationError) in
                throw reader.fail(path, "replaced by client_address: forwarded-for (was true) or client_address: host (was false)")
            }
        ),
        .custom(
            "device",
            .mapping,
            "What the fleet's devices are, for single sign-on: platform, OS version, storage rules.",
            default: { _ in "" },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                var settings = fleet.sso ?? DeviceSSOSettings()
                try reader.apply(device, node, prefix: path, to: &settings)
                fleet.sso = settings
            }
        ).opening(device, defaults: DeviceSSOSettings()),
        .custom(
            "tv_provider",
            .mapping,
            "The TV Provider (Apple single sign-on) each device starts with.",
            default: { _ in "not emulated" },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                var draft = TVProviderDraft()
                try reader.apply(tvProvider, node, prefix: path, to: &draft)
                fleet.tvProvider = draft.assembled
            }
        ).opening(tvProvider, defaults: TVProviderDraft()),
        .custom(
            "apps",
            .list("apps"),
            "The apps each device hosts, for single sign-on; ids unique in the fleet.",
            default: { $0.apps.isEmpty ? "one plain app" : $0.apps.map(\.id).joined(separator: ", ") },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                var apps: [AppConfiguration] = []
                for (itemPath, item) in try reader.sequence(node, path, expected: "expected a list of apps") {
                    var draft = AppDraft()
                    try reader.apply(app, item, prefix: itemPath, to: &draft)
                    let app = try draft.app(at: itemPath, reader)
                    if apps.contains(where: { $0.id == app.id }) { throw reader.fail("\(itemPath).id", "'\(app.id)' is listed twice") }
                    apps.append(app)
                }
                fleet.apps = apps
            }
        ).opening(app, defaults: AppDraft(), path: "fleets[].apps[]"),
        .custom(
            "sso_identity",
            .mapping,
            "REST v2 single sign-on identities the devices present; null, or naming no user, means none.",
            default: { _ in "none" },
            read: { fleet, node, path, reader throws(ConfigurationError) in
                if node.null != nil {
                    fleet.ssoIdentity = nil
                    return
                }
                var settings = fleet.ssoIdentity ?? SSOIdentitySettings()
                try reader.apply(ssoIdentity, node, prefix: path, to: &settings)
                fleet.ssoIdentity = settings.isEmpty ? nil : settings
            }
        ).opening(ssoIdentity, defaults: SSOIdentitySettings()),
        .section("login", "Which provider the login and cycle scenarios pick.", login, at: \.self),
        .section("cycle", "Timing of the `cycle` scenario.", cycle, at: \.cycle),
    ]

    /// `client_address:` as a mapping.
    static let clientAddress: [ConfigurationKey<ClientAddressConfiguration>] = [
        .custom(
            "mode",
            .choice(ClientAddressMode.allCases.map(\.rawValue)),
            "`host` (this host's address), `bind` (each device's own local address) or `forwarded-for` (an `X-Forwarded-For` header per device).",
            default: { $0.mode?.rawValue ?? "bind on a loopback backend, else host" },
            read: { configuration, node, path, reader throws(ConfigurationError) in
                configuration.mode = try reader.choice(node, path) as ClientAddressMode
            }
        ),
        .custom(
            "addresses",
            .text("a string or a list of CIDR ranges and addresses"),
            "The addresses the devices take their own from, for `bind` and `forwarded-for`.",
            default: { $0.addresses ?? "client_addresses, else the mode's" },
            read: { configuration, node, path, reader throws(ConfigurationError) in
                if node.sequence != nil {
                    var items: [String] = []
                    for (itemPath, item) in try reader.sequence(node, path, expected: "") { items.append(try reader.string(item, itemPath)) }
                    configuration.addresses = items.joined(separator: ", ")
                } else {
                    configuration.addresses = try reader.string(node, path)
                }
            }
        ),
    ]

    /// `login:`, on the fleet itself.
    static let login: [FleetKey] = [
        .choice(
            "provider",
            \.loginProvider,
            "`regular` (the configured MVPD, else the first regular one) or `temppass` (the first TempPass MVPD).",
            ignoringCase: true
        ),
        .optionalString(
            "temppass_email",
            \.tempPassEmail,
            "Makes the login promotional TempPass: the identity sent as `AP-TempPass-Identity`.",
            none: "none (basic TempPass)"
        ),
    ]

    /// `cycle:`, the `cycle` scenario's timing.
    static let cycle: [ConfigurationKey<CyclePlan>] = [
        .duration("hold", \.hold, "How long each login is held before logging out."),
        .custom(
            "authorize_every",
            .duration(bound: "at least 1s"),
            "How often `getAuthorization(cycle.resource)` is called while the login is held (and a failed login retried).",
            default: { DurationParser.format($0.authorizeEvery) },
            read: { plan, node, path, reader throws(ConfigurationError) in
                let every = try reader.duration(node, path)
                guard every >= .seconds(1) else { throw reader.fail(path, "must be at least 1s") }
                plan.authorizeEvery = every
            }
        ),
        .string("resource", \.resource, "The resource authorized while the login is held."),
    ]
}
