import RegcodeSupport

/// A single sign-on decision made visible to labs: not an AccessEnabler callback, but delivered on
/// the same event stream (named `sso.…`) so a lab can see why an app was or was not signed in.
package enum SSODiagnosticEvent: Sendable, Equatable {
    /// The app is authenticated with a token another app stored in the same domain.
    case tokenShared(owner: String, domain: String, mvpd: String)
    /// A token in the app's domain was seen and not used.
    case tokenIgnored(owner: String, domain: String, mvpd: String, reason: TokenIgnoreReason)
    /// `setRequestor` deleted a token from the app's domain (the 1.8 sanitizer, or `SEC412`).
    case tokenWiped(owner: String, domain: String, mvpd: String, reason: WipeReason)

    /// Why `setRequestor` deleted a token.
    package enum WipeReason: String, Sendable, Equatable {
        /// The sanitizer of AccessEnabler 1.7.5 ..< 1.9: bound to another device id.
        case deviceIdMismatch
        /// `SEC412`: the app's own device id changed.
        case ownDeviceIdChanged
    }

    package var name: String {
        switch self {
        case .tokenShared: "sso.tokenShared"
        case .tokenIgnored: "sso.tokenIgnored"
        case .tokenWiped: "sso.tokenWiped"
        }
    }

    package var args: [String: JSONValue] {
        switch self {
        case .tokenShared(let owner, let domain, let mvpd):
            ["owner": .string(owner), "domain": .string(domain), "mvpd": .string(mvpd)]
        case .tokenIgnored(let owner, let domain, let mvpd, let reason):
            ["owner": .string(owner), "domain": .string(domain), "mvpd": .string(mvpd), "reason": .string(reason.rawValue)]
        case .tokenWiped(let owner, let domain, let mvpd, let reason):
            ["owner": .string(owner), "domain": .string(domain), "mvpd": .string(mvpd), "reason": .string(reason.rawValue)]
        }
    }
}
