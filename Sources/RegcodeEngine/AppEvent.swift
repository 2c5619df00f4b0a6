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
    /// `GET /logout/{mvpd}` answered.
    case loggedOut(mvpd: String)
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

    /// The event's name on the wire.
    package var name: String {
        switch self {
        case .profilesChecked: "app.profilesChecked"
        case .configurationLoaded: "app.configurationLoaded"
        case .providerPicker: "app.providerPicker"
        case .sessionCreated: "app.sessionCreated"
        case .signedIn: "app.signedIn"
        case .sessionEnded: "app.sessionEnded"
        case .decision: "app.decision"
        case .preauthorization: "app.preauthorization"
        case .loggedOut: "app.loggedOut"
        case .throttled: "app.throttled"
        case .callFailed: "app.callFailed"
        }
    }

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
        case .loggedOut(let mvpd):
            ["mvpd": .string(mvpd)]
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
