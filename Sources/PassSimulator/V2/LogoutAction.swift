/// What a v2 logout tells the device to do for one MVPD: the `actionName` values of Adobe's logout API page, each with
/// its `actionType`
/// (https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/rest-apis/rest-api-v2/rest-api-v2-apis/rest-api-v2-logout-apis/rest-api-v2-logout-apis-initiate-logout-for-specific-mvpd).
enum LogoutAction: Sendable, Equatable {
    /// Open `url` in a user agent: the MVPD has a logout endpoint.
    case logout(url: String)
    /// Tell the user to sign out at the system level: the profile was `appleSSO`.
    case partnerLogout
    /// Nothing left to do: degraded or temporary access, or an MVPD without a logout endpoint.
    case complete
    /// Nothing to do either: no valid profile was found.
    case invalid

    /// `actionName`.
    var name: String {
        switch self {
        case .logout: "logout"
        case .partnerLogout: "partner_logout"
        case .complete: "complete"
        case .invalid: "invalid"
        }
    }

    /// `actionType`.
    var type: String {
        switch self {
        case .logout: "interactive"
        case .partnerLogout: "partner_interactive"
        case .complete, .invalid: "none"
        }
    }

    /// The entry of `logouts` for `mvpd`; `url` only for ``logout(url:)``.
    func entry(mvpd: String) -> [String: String] {
        var entry = ["actionName": self.name, "actionType": self.type, "mvpd": mvpd]
        if case .logout(let url) = self { entry["url"] = url }
        return entry
    }
}
