/// The settings of one requestor × MVPD integration that single sign-on depends on (sso.md §3.3).
package struct IntegrationSettings: Sendable, Hashable, Codable {
    /// A disabled integration is answered 400 `invalid_integration` on v2, as a missing one is.
    package var enabled: Bool
    /// The MVPD is degraded: partner sessions answer `authorize`/`degraded`, partner profiles are `degraded`.
    package var degraded: Bool
    /// Legacy per-requestor authentication flag; published only.
    package var authPerRequestor: Bool
    /// Legacy switch that turns every SSO method off for the integration.
    package var ssoDisabled: Bool
    /// SSO methods allowed per platform.
    package var sso: SSOPlatforms
    /// Lifetime of profiles created for the integration, in seconds; `nil` uses the simulator's profile TTL.
    package var ttl: Int64?

    /// An enabled, healthy integration with every SSO method on.
    package init(
        enabled: Bool = true,
        degraded: Bool = false,
        authPerRequestor: Bool = false,
        ssoDisabled: Bool = false,
        sso: SSOPlatforms = .init(),
        ttl: Int64? = nil
    ) {
        self.enabled = enabled
        self.degraded = degraded
        self.authPerRequestor = authPerRequestor
        self.ssoDisabled = ssoDisabled
        self.sso = sso
        self.ttl = ttl
    }

    private enum CodingKeys: String, CodingKey {
        case enabled, degraded, authPerRequestor, ssoDisabled, sso, ttl
    }

    /// Missing fields take the defaults.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
        self.degraded = try container.decodeIfPresent(Bool.self, forKey: .degraded) ?? false
        self.authPerRequestor = try container.decodeIfPresent(Bool.self, forKey: .authPerRequestor) ?? false
        self.ssoDisabled = try container.decodeIfPresent(Bool.self, forKey: .ssoDisabled) ?? false
        self.sso = try container.decodeIfPresent(SSOPlatforms.self, forKey: .sso) ?? .init()
        self.ttl = try container.decodeIfPresent(Int64.self, forKey: .ttl)
        if let ttl = self.ttl, ttl <= 0 {
            throw DecodingError.dataCorruptedError(forKey: .ttl, in: container, debugDescription: "ttl must be a positive number of seconds")
        }
    }

    /// Whether the platform-identity or service-token method applies to this integration.
    func allows(_ method: SSOMethod) -> Bool {
        self.enabled && !self.ssoDisabled && self.sso.allows(method)
    }

    /// Whether Apple partner SSO applies for a device running `platform`.
    func allowsApple(on platform: ApplePlatform?) -> Bool {
        guard self.enabled, !self.ssoDisabled, let platform else { return false }
        switch platform {
        case .iOS: return self.sso.appleIos
        case .tvOS: return self.sso.appleTvos
        }
    }
}

/// The two Apple platforms partner SSO exists on, from `X-Device-Info`'s `osName`.
enum ApplePlatform: Sendable {
    case iOS
    case tvOS

    /// `tvOS` → tvOS; `iOS`/`iPadOS` → iOS; anything else (or no header) → `nil`: no Apple partner SSO.
    init?(osName: String?) {
        switch osName?.lowercased() {
        case "tvos"?: self = .tvOS
        case "ios"?, "ipados"?: self = .iOS
        default: return nil
        }
    }
}
