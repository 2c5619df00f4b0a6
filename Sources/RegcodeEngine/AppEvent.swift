import RegcodeSupport

/// What a native REST v2 app's own code sees (it has no SDK callbacks): the states `rest-v2-native-app.md` ("What
/// a lab sees of such an app") lists, delivered on the event stream as `app.…` events.
package enum AppEvent: Sendable, Equatable {
    /// The launch check (`GET /profiles` or `/profiles/{mvpd}`): every profile, the one chosen and why.
    case profilesChecked(profiles: [AuthProfile], chosen: String?, reason: ProfileChoice)
    /// The MVPD list, loaded now or reused from the cache (`ageMs` old).
    case configurationLoaded(mvpds: Int, fromCache: Bool, ageMs: Int64)
    /// The provider picker the app shows (regular MVPDs; TempPass and test MVPDs are the app's own buttons).
    case providerPicker([MVPD])
    /// `POST sessions` answered: `code` to show (nil when the answer said the device is signed in already).
    case sessionCreated(mvpd: String?, code: String?, notAfterMs: Int64?)
    /// Signed in: the profile the app now uses.
    case signedIn(AuthProfile)
    /// The login ended without a profile: the code expired, the login was cancelled or replaced, or it failed.
    case sessionEnded(reason: SessionEnd, error: EnhancedError?)
    /// A playback decision (`decisions/authorize`, one resource).
    case decision(AuthorizationDecision)
    /// A catalogue preauthorization: one decision per resource.
    case preauthorization([AuthorizationDecision])
    /// `GET /logout/{mvpd}` answered: each MVPD's instruction, and what the app shows for it.
    case loggedOut(mvpd: String, instructions: [LogoutInstruction])
    /// A call was answered 429: the app waits at least `waitMs` before the next.
    case throttled(call: String, waitMs: Int64)
    /// A call failed for good (its retries, if any, spent): the error the app shows.
    case callFailed(call: String, error: EnhancedError?, message: String)

    /// Why the launch check picked a profile.
    package enum ProfileChoice: String, Sendable, Equatable {
        /// No profile: the app is signed out.
        case none
        /// One profile came back.
        case only
        /// Several: the one valid longest (the checklist's recommended practice).
        case longestValidity
    }

    /// How a login ended without a profile.
    package enum SessionEnd: String, Sendable, Equatable {
        case expired
        case cancelled
        case failed
    }

    /// The events by kind: the one list of them, which the reference page is generated from.
    package enum Kind: String, Sendable, CaseIterable {
        case profilesChecked, configurationLoaded, providerPicker, sessionCreated, signedIn, sessionEnded, decision
        case preauthorization, loggedOut, throttled, callFailed

        /// When the event comes, and what it carries.
        package var summary: String {
            switch self {
            case .profilesChecked:
                "The launch check answered: `{profiles: [{mvpd, type, notAfter, userID?}], chosen, reason: none|only|longestValidity}`."
            case .configurationLoaded:
                "The MVPD list for the picker: `{mvpds, fromCache, ageMs}` (loaded only when the user must pick, cached 3 minutes)."
            case .providerPicker: "The provider picker the app shows: `{mvpds: [{ID, displayName, logoURL, tempPass}]}`; answer with `app.pick`."
            case .sessionCreated: "`POST sessions` answered: `{mvpd, code, notAfter}` (`code` null when the device was signed in already)."
            case .signedIn: "Signed in: `{profile: {mvpd, type, notAfter, userID?}}`."
            case .sessionEnded: "A login ended without a profile: `{reason: expired|cancelled|failed, error}`."
            case .decision: "A playback decision: `{resource, authorized, source?, notAfter?, token?, error?}`."
            case .preauthorization: "A catalogue preauthorization: `{decisions: [...]}`, one per resource."
            case .loggedOut:
                "`GET /logout/{mvpd}` answered: `{mvpd, logouts: [{mvpd, actionName: logout|partner_logout|complete|invalid, actionType, url?, shown}]}`; `shown` is what a TV without a browser tells the user."
            case .throttled: "A call answered 429: `{call, waitMs}`."
            case .callFailed: "A call failed for good: `{call, error: {status, code, action, message, details}, message}`."
            }
        }
    }

    package var kind: Kind {
        switch self {
        case .profilesChecked: .profilesChecked
        case .configurationLoaded: .configurationLoaded
        case .providerPicker: .providerPicker
        case .sessionCreated: .sessionCreated
        case .signedIn: .signedIn
        case .sessionEnded: .sessionEnded
        case .decision: .decision
        case .preauthorization: .preauthorization
        case .loggedOut: .loggedOut
        case .throttled: .throttled
        case .callFailed: .callFailed
        }
    }

    /// The event's name on the wire.
    package var name: String { "app." + kind.rawValue }

    /// The event's arguments on the wire.
    package var args: [String: JSONValue] {
        switch self {
        case .profilesChecked(let profiles, let chosen, let reason):
            ["profiles": .array(profiles.map(\.appJSON)), "chosen": chosen.map(JSONValue.string) ?? .null, "reason": .string(reason.rawValue)]
        case .configurationLoaded(let mvpds, let fromCache, let ageMs):
            ["mvpds": .int(Int64(mvpds)), "fromCache": .bool(fromCache), "ageMs": .int(ageMs)]
        case .providerPicker(let mvpds):
            ["mvpds": .array(mvpds.map(\.jsonValue))]
        case .sessionCreated(let mvpd, let code, let notAfterMs):
            [
                "mvpd": mvpd.map(JSONValue.string) ?? .null, "code": code.map(JSONValue.string) ?? .null,
                "notAfter": notAfterMs.map(JSONValue.int) ?? .null,
            ]
        case .signedIn(let profile):
            ["profile": profile.appJSON]
        case .sessionEnded(let reason, let error):
            ["reason": .string(reason.rawValue), "error": error.map(\.appJSON) ?? .null]
        case .decision(let decision):
            decision.appJSON.objectValue ?? [:]
        case .preauthorization(let decisions):
            ["decisions": .array(decisions.map(\.appJSON))]
        case .loggedOut(let mvpd, let instructions):
            ["mvpd": .string(mvpd), "logouts": .array(instructions.map(\.appJSON))]
        case .throttled(let call, let waitMs):
            ["call": .string(call), "waitMs": .int(waitMs)]
        case .callFailed(let call, let error, let message):
            ["call": .string(call), "error": error.map(\.appJSON) ?? .null, "message": .string(message)]
        }
    }
}

extension AuthProfile {
    /// `{mvpd, type, notAfter, userID?}` as an app sees a profile.
    var appJSON: JSONValue {
        var object: [String: JSONValue] = ["mvpd": .string(mvpd), "type": .string(type.rawValue), "notAfter": .int(expiresEpochMs)]
        if let userID { object["userID"] = .string(userID) }
        return .object(object)
    }
}

extension EnhancedError {
    /// `{status, code, action, message, details}` of an enhanced error.
    var appJSON: JSONValue {
        var object: [String: JSONValue] = ["code": .string(code)]
        if let status { object["status"] = .int(Int64(status)) }
        if let action { object["action"] = .string(action.rawValue) }
        if let message { object["message"] = .string(message) }
        if let details { object["details"] = .string(details) }
        return .object(object)
    }
}

extension AuthorizationDecision {
    /// `{resource, authorized, source?, notAfter?, token?, error?}` as an app sees a decision.
    var appJSON: JSONValue {
        var object: [String: JSONValue] = ["resource": .string(resource), "authorized": .bool(authorized)]
        if let source { object["source"] = .string(source.rawValue) }
        if let expiresEpochMs { object["notAfter"] = .int(expiresEpochMs) }
        if token != nil { object["token"] = .bool(true) }
        if let error { object["error"] = error.appJSON }
        return .object(object)
    }
}

extension LogoutInstruction {
    /// `{mvpd, actionName, actionType?, url?, shown}`.
    var appJSON: JSONValue {
        var object: [String: JSONValue] = ["mvpd": .string(mvpd), "actionName": .string(action.name), "shown": .string(action.shown)]
        if let actionType { object["actionType"] = .string(actionType) }
        if let url { object["url"] = .string(url) }
        return .object(object)
    }
}
