import AccessEnablerAPI
import Foundation
import RegcodeSupport

/// A profile's `type` (REST v2 `MvpdProfile.type`): how the backend authenticated the user.
///
/// Open like ``StatusID``: a type this version does not name is kept as it came.
package struct ProfileType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// The user logged in with the MVPD (the code flow).
    package static let regular = ProfileType(rawValue: "regular")
    /// TempPass (basic or promotional): no MVPD login, issuer Adobe, the TempPass's TTL.
    package static let temporary = ProfileType(rawValue: "temporary")
    /// Authenticated by an AuthNAll degradation rule: no MVPD login, issuer Adobe.
    package static let degraded = ProfileType(rawValue: "degraded")
    package static let appleSSO = ProfileType(rawValue: "appleSSO")
    package static let platformSSO = ProfileType(rawValue: "platformSSO")
    package static let serviceTokenSSO = ProfileType(rawValue: "serviceTokenSSO")

    /// The single sign-on types: the login came from another app, device or the platform's account.
    package static let singleSignOn: Set<ProfileType> = [.appleSSO, .platformSSO, .serviceTokenSSO]

    /// How the soak report counts a login with this profile; an unknown type counts as regular.
    package var loginKind: LoginKind {
        switch self {
        case .temporary: .tempPass
        case .degraded: .degraded
        case _ where Self.singleSignOn.contains(self): .singleSignOn
        default: .regular
        }
    }
}

/// The kinds of login the soak report counts (stored as `auth_profiles.kind` and `logins.kind`).
package enum LoginKind: String, Sendable, Hashable, Codable, CaseIterable {
    case regular
    case tempPass = "temppass"
    case degraded
    case singleSignOn = "sso"
}

/// A decision's `source` (REST v2 `DecisionResponse.source`): who decided.
package struct DecisionSource: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    package static let mvpd = DecisionSource(rawValue: "mvpd")
    /// An AuthNAll or AuthZAll degradation rule decided without the MVPD.
    package static let degradation = DecisionSource(rawValue: "degradation")
    package static let tempPass = DecisionSource(rawValue: "temppass")
    package static let dummy = DecisionSource(rawValue: "dummy")
}

/// Which provider the `login` (and `cycle`) scenario picks in `displayProviderDialog`.
package enum LoginProvider: String, Sendable, Hashable, Codable, CaseIterable {
    /// The configured MVPD, else the first MVPD offered that is not a TempPass.
    case regular
    /// The first TempPass MVPD offered (`MVPD.tempPass`), ignoring the configured MVPD.
    case tempPass = "temppass"
    /// No MVPD: a native app's code-first login (`POST sessions` without one; the second screen picks). A persona
    /// without it (``PersonaRules/codeFirstLogin``) shows its picker and picks as `regular` does.
    case codeFirst = "code-first"
}

/// The statuses AccessEnabler adds for the entitlement variants (reference §3.3, §7 flows 3 and 9): what a
/// login or a decision was made under, and the variant codes of a denial.
enum EntitlementVariants {
    /// `N010` (warning) after a login under degradation, `N011` (info) after a TempPass login; nil otherwise.
    static func authenticationStatus(for profile: AuthProfile) -> DeviceEvent? {
        switch profile.type {
        case .degraded:
            DeviceEvent.status(
                .authenticatedDegraded,
                level: .warning,
                message: "authenticated under degradation",
                extra: ["mvpd": .string(profile.mvpd)]
            )
        case .temporary:
            DeviceEvent.status(.authenticatedTempPass, level: .info, message: "authenticated with TempPass", extra: ["mvpd": .string(profile.mvpd)])
        default:
            nil
        }
    }

    /// `Z010` (warning) for a grant by a degradation rule, `Z011` (info) for a TempPass grant; nil for an
    /// MVPD's. Without a `source` (v1), the profile's type tells.
    static func authorizationStatus(source: DecisionSource?, profile: AuthProfile?, resource: String) -> DeviceEvent? {
        let extra: [String: JSONValue] = ["resource": .string(resource)]
        let decided = source ?? profile.flatMap(impliedSource)
        if decided == .degradation {
            return .status(.authorizedDegraded, level: .warning, message: "authorized under degradation", extra: extra)
        }
        if decided == .tempPass {
            return .status(.authorizedTempPass, level: .info, message: "authorized with TempPass", extra: extra)
        }
        return nil
    }

    private static func impliedSource(_ profile: AuthProfile) -> DecisionSource? {
        switch profile.type {
        case .degraded: .degradation
        case .temporary: .tempPass
        default: nil
        }
    }

    /// Adobe's codes saying a TempPass is spent (duration or resources), v2 §9.3.
    static let tempPassSpentCodes: Set<String> = ["temporary_access_duration_limit_exceeded", "temporary_access_resources_limit_exceeded"]

    /// Whether `failure` (or a denial's item error) says the TempPass is spent.
    static func isTempPassSpent(_ error: EnhancedError?) -> Bool {
        error.map { tempPassSpentCodes.contains($0.code) } ?? false
    }

    static func isTempPassSpent(_ failure: BackendFailure) -> Bool {
        guard case .http(_, _, let error) = failure else { return false }
        return isTempPassSpent(error)
    }

    /// The status of a denied decision: the MVPD's or a policy's denial is `Z100` whatever its action says
    /// (home-based authentication out of home, parental controls: the user is authenticated, only not here or
    /// not for this); every other code as ``FailureMapping/decisionStatus(for:)`` reads it.
    static func denialStatus(for error: EnhancedError?) -> StatusID {
        if let code = error?.code, policyDenials.contains(code) { return .authorizationDenied }
        return FailureMapping.decisionStatus(for: error)
    }

    /// Denials by the MVPD or by a policy on the user's side (home network, parental controls).
    static let policyDenials: Set<String> = [
        "authorization_denied_by_hba_policies", "authorization_denied_by_parental_controls", "authorization_denied_by_mvpd",
        "preauthorization_denied_by_mvpd",
    ]

    /// `N111`, warning: the TempPass ran out; `message` is Adobe's text.
    static func tempPassExpired(_ error: EnhancedError?, mvpd: String) -> DeviceEvent {
        var extra: [String: JSONValue] = ["mvpd": .string(mvpd)]
        if let code = error?.code { extra["details"] = .string(code) }
        return .status(.tempPassExpired, level: .warning, message: error?.message ?? "TempPass expired", extra: extra)
    }
}

extension DeviceEngine {
    /// The context of one call: ``requestContext``, with `AP-TempPass-Identity` when the call is for a TempPass
    /// MVPD of the requestor's list and the device has a promotional TempPass identity (REST v2 only).
    func context(for request: BackendRequest) -> RequestContext {
        var context = requestContext
        guard settings.profile == .v2, let email = settings.tempPassEmail, let mvpd = request.mvpd,
            snapshot.mvpds?.contains(where: { $0.id == mvpd && $0.isTempPass }) == true
        else { return context }
        context.tempPassIdentity = EntitlementVariants.tempPassIdentity(email: email)
        return context
    }
}

extension EntitlementVariants {
    /// `AP-TempPass-Identity`: base64 of `{"email":"…"}`, the identity Adobe's header page shows.
    static func tempPassIdentity(email: String) -> String {
        let json = JSONValue.object(["email": .string(email)])
        return Data(JSONWriter.text(json).utf8).base64EncodedString()
    }
}

extension BackendRequest {
    /// The MVPD the call is about, when it names one.
    var mvpd: String? {
        switch self {
        case .createSession(let mvpd): mvpd
        case .pollProfile(_, let mvpd), .launchProfiles(let mvpd): mvpd
        case .fetchProfile(let mvpd), .authorize(let mvpd, _), .mediaToken(let mvpd, _), .preauthorize(let mvpd, _),
            .userMetadata(let mvpd), .logout(let mvpd), .partnerSession(let mvpd), .partnerProfile(_, let mvpd):
            mvpd
        case .registerClient, .obtainAccessToken, .configuration, .checkAuthentication, .wire:
            nil
        }
    }
}
