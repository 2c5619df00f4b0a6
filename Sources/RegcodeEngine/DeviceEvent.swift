import AccessEnablerAPI
import OAuthDeviceGrant
import RegcodeSupport

/// One AccessEnabler callback fired by a device, with its typed arguments.
///
/// ``callback`` and ``args`` are its wire form: the callback name and the parameters under their
/// AccessEnabler names, as the socket sends them and the `events` table stores them.
package enum DeviceEvent: Sendable, Equatable {
    case setRequestorComplete(Int64)
    /// `status` 1 with ``ErrorCode/none``, or 0 with the reason.
    case setAuthenticationStatus(Int64, ErrorCode)
    case displayProviderDialog([MVPD])
    case selectedProvider(MVPD?)
    /// The advanced-status callback (`status:`).
    case status(StatusReport)
    case sendTrackingData(TrackingEvent, [String])
    case setToken(String, resource: String)
    case tokenRequestFailed(String, errorCode: ErrorCode, errorDescription: String)
    /// The granted resources; `errors` holds the item-level errors of denied ones (not an AccessEnabler argument:
    /// the SDK's `preauthorize` API reports them per decision, this callback's array cannot).
    case preauthorizedResources([String], errors: [ResourceError] = [])
    /// `setMetadataStatus:encrypted:forKey:andArguments:`; `arguments` is the key dictionary as the app passed it.
    case setMetadataStatus(JSONValue, encrypted: Bool, key: Int64, arguments: JSONValue)
    /// The Apple TV Provider picker to present; the argument describes it (`VSAccountPicker`, providers).
    case presentTvProviderDialog(JSONValue)
    case dismissTvProviderDialog(JSONValue)
    /// `navigateToUrl:` with the MVPD login URL (iOS devices, instead of `status` `REGCODE`).
    case navigateToUrl(String)
    /// A single sign-on diagnostic (`sso.…`): not an AccessEnabler callback.
    case sso(SSODiagnosticEvent)
    /// `queue.callRefused`, a diagnostic: the device already had `waiting` calls waiting (the bound is `limit`), so
    /// this call was refused and makes no callback; the caller also got the error. Not an AccessEnabler callback.
    case callRefused(DeviceCommand.Name, waiting: Int, limit: Int)
    /// A native REST v2 app's state (`app.…`): what a `rest-v2` device reports instead of callbacks.
    case app(AppEvent)
    /// An OAuth device's event (`oauth.…`), in RFC 8628's words: what a `protocol: oauth-device` device reports.
    case oauth(OAuthDeviceEvent)

    /// An advanced-status callback.
    package static func status(
        _ id: StatusID,
        level: StatusLevel = .error,
        message: String? = nil,
        extra: [String: JSONValue] = [:]
    ) -> DeviceEvent {
        .status(StatusReport(id: id, level: level, message: message, extra: extra))
    }

    /// The AccessEnabler callback; nil for diagnostics.
    package var callback: Callback? {
        switch self {
        case .setRequestorComplete: .setRequestorComplete
        case .setAuthenticationStatus: .setAuthenticationStatus
        case .displayProviderDialog: .displayProviderDialog
        case .selectedProvider: .selectedProvider
        case .status: .status
        case .sendTrackingData: .sendTrackingData
        case .setToken: .setToken
        case .tokenRequestFailed: .tokenRequestFailed
        case .preauthorizedResources: .preauthorizedResources
        case .setMetadataStatus: .setMetadataStatus
        case .presentTvProviderDialog: .presentTvProviderDialog
        case .dismissTvProviderDialog: .dismissTvProviderDialog
        case .navigateToUrl: .navigateToUrl
        case .sso, .callRefused, .app, .oauth: nil
        }
    }

    /// The callback's (or diagnostic's) name on the wire.
    package var name: String {
        if case .sso(let diagnostic) = self { return diagnostic.name }
        if case .callRefused = self { return "queue.callRefused" }
        if case .app(let event) = self { return event.name }
        if case .oauth(let event) = self { return event.name }
        return callback?.rawValue ?? ""
    }

    /// The parameters under their AccessEnabler names (the `statusDictionary` keys as iOS sends them).
    package var args: [String: JSONValue] {
        switch self {
        case .setRequestorComplete(let status):
            ["status": .int(status)]
        case .setAuthenticationStatus(let status, let errorCode):
            ["status": .int(status), "errorCode": .string(errorCode.rawValue)]
        case .displayProviderDialog(let mvpds):
            ["mvpds": .array(mvpds.map(\.jsonValue))]
        case .selectedProvider(let mvpd):
            ["mvpd": mvpd?.jsonValue ?? .null]
        case .status(let report):
            ["statusDictionary": .object(report.dictionary)]
        case .sendTrackingData(let event, let data):
            ["event": .int(event.rawValue), "eventName": .string(event.name), "data": .array(data.map { .string($0) })]
        case .setToken(let token, let resource):
            ["token": .string(token), "resource": .string(resource)]
        case .tokenRequestFailed(let resource, let errorCode, let errorDescription):
            ["resource": .string(resource), "errorCode": .string(errorCode.rawValue), "errorDescription": .string(errorDescription)]
        case .preauthorizedResources(let resources, let errors):
            errors.isEmpty
                ? ["resources": .array(resources.map { .string($0) })]
                : ["resources": .array(resources.map { .string($0) }), "errors": .array(errors.map(\.jsonValue))]
        case .setMetadataStatus(let metadata, let encrypted, let key, let arguments):
            ["metadata": metadata, "encrypted": .bool(encrypted), "key": .int(key), "arguments": arguments]
        case .presentTvProviderDialog(let viewController), .dismissTvProviderDialog(let viewController):
            ["viewController": viewController]
        case .navigateToUrl(let url):
            ["url": .string(url)]
        case .sso(let diagnostic):
            diagnostic.args
        case .callRefused(let call, let waiting, let limit):
            ["call": .string(call.rawValue), "waiting": .int(Int64(waiting)), "limit": .int(Int64(limit))]
        case .app(let event):
            event.args
        case .oauth(let event):
            event.args
        }
    }

    /// For `status` events, the status id.
    package var statusID: StatusID? {
        if case .status(let report) = self { return report.id }
        return nil
    }

    /// What an event says about the login, in either vocabulary: `setAuthenticationStatus` for an SDK app, the
    /// `app.…` states for a native one.
    package enum LoginSignal: Sendable, Equatable {
        case signedIn
        /// A login ended without a profile (code expired, none obtainable).
        case loginFailed
        /// Not (or no longer) signed in: a check's answer, or a logout.
        case signedOut
    }

    package var loginSignal: LoginSignal? {
        switch self {
        case .setAuthenticationStatus(let status, _) where status == AccessEnabler.statusSuccess: .signedIn
        case .setAuthenticationStatus(_, .genericAuthentication): .loginFailed
        case .setAuthenticationStatus: .signedOut
        case .app(.signedIn): .signedIn
        case .app(.sessionEnded): .loginFailed
        case .app(.loggedOut): .signedOut
        case .oauth(.authorized): .signedIn
        case .oauth(.denied), .oauth(.expired), .oauth(.failed(_)): .loginFailed
        case .oauth(.loggedOut): .signedOut
        default: nil
        }
    }

    /// The code a device shows for a second-screen login, in either vocabulary (`status` `REGCODE`, `app.sessionCreated`).
    package var shownCode: (code: String, expiresEpochMs: Int64?)? {
        switch self {
        case .status(let report) where report.id == .registrationCode:
            report.message.map { ($0, report.extra["expires"]?.intValue) }
        case .app(.sessionCreated(_, let code?, let notAfterMs)):
            (code, notAfterMs)
        case .oauth(.codeShown(let shown)):
            (shown.userCode, shown.expiresEpochMs)
        default:
            nil
        }
    }

    /// Where the user enters the shown code, when the event names it (an OAuth device's `verification_uri`).
    package var verificationURI: String? {
        if case .oauth(.codeShown(let shown)) = self { return shown.verificationURI }
        return nil
    }

    /// Whether the event says the shown code expired (`status` `REG200`-style expiry, `app.sessionEnded` expired).
    package var saysCodeExpired: Bool {
        switch self {
        case .status(let report): report.id == .registrationCodeExpired
        case .app(.sessionEnded(.expired, _)): true
        case .oauth(.expired): true
        default: false
        }
    }

    /// For `setAuthenticationStatus` (and a native app's sign-in or failed login), whether it says the user is
    /// authenticated.
    package var authenticated: Bool? {
        switch self {
        case .setAuthenticationStatus(let status, _): status == AccessEnabler.statusSuccess
        case .app(.signedIn): true
        case .app(.sessionEnded): false
        case .oauth(.authorized): true
        case .oauth(.denied), .oauth(.expired): false
        default: nil
        }
    }
}

/// The dictionary of an advanced-status callback.
package struct StatusReport: Sendable, Equatable {
    package var id: StatusID
    package var level: StatusLevel
    package var message: String?
    /// Further keys (`expires`, `code`, `resource`).
    package var extra: [String: JSONValue]

    package init(id: StatusID, level: StatusLevel, message: String?, extra: [String: JSONValue]) {
        self.id = id
        self.level = level
        self.message = message
        self.extra = extra
    }

    var dictionary: [String: JSONValue] {
        var dictionary: [String: JSONValue] = ["errorId": .string(id.rawValue), "level": .string(level.rawValue)]
        if let message { dictionary["message"] = .string(message) }
        for (key, value) in extra { dictionary[key] = value }
        return dictionary
    }
}

extension MVPD {
    /// The MVPD as AccessEnabler's picker objects describe it (`ID`, `displayName`, `logoURL`, and `tempPass` as
    /// the iOS `MVPD` object carries it).
    package var jsonValue: JSONValue {
        ["ID": .string(id), "displayName": .string(displayName), "logoURL": logoURL.map(JSONValue.string) ?? .null, "tempPass": .bool(isTempPass)]
    }
}

/// A denied resource of a preauthorization with its item-level enhanced error.
package struct ResourceError: Sendable, Equatable {
    package var resource: String
    package var error: EnhancedError

    package init(resource: String, error: EnhancedError) {
        self.resource = resource
        self.error = error
    }

    /// `{resource, status, code, action, message, details}` as the decision's `error` carried them.
    var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["resource": .string(resource), "code": .string(error.code)]
        if let status = error.status { object["status"] = .int(Int64(status)) }
        if let action = error.action { object["action"] = .string(action.rawValue) }
        if let message = error.message { object["message"] = .string(message) }
        if let details = error.details { object["details"] = .string(details) }
        return .object(object)
    }
}

extension DeviceEvent {
    /// For `status` events, the `errorId` as text.
    package var statusErrorID: String? { statusID?.rawValue }
}
