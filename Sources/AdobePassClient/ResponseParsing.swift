import Foundation
import RegcodeEngine
import RegcodeSupport

/// Turns a raw backend answer (status, `Retry-After`, body) into the engine's result types.
///
/// Pure and I/O-free; `AdobePassClient` uses it after each exchange.
package enum AdobePassResponseParser {
    /// Interprets one answer to `request`.
    /// - Parameters:
    ///   - request: What was asked; selects the success shape.
    ///   - profile: The API the call went to (v1 answers differ, e.g. 404 means "pending" on `tokens/authn`).
    ///   - status: The HTTP status code.
    ///   - retryAfter: The raw `Retry-After` header, if any.
    ///   - body: The response body.
    ///   - now: Reference time for an HTTP-date `Retry-After`.
    package static func parse(
        request: BackendRequest,
        profile: APIProfile,
        status: Int,
        retryAfter: String?,
        body: Data,
        now: Date = Date()
    ) -> Result<BackendResponse, BackendFailure> {
        // One parse per answer; the error shapes are only looked for when the status is not a success.
        let json = JSONValue.parse(body)
        guard (200..<300).contains(status) else {
            let error = json.flatMap { errorBody($0) ?? (profile == .v1 ? v1ClassicError(status: status, json: $0) : nil) }
            if profile == .v1, let answer = v1StatusAnswer(request: request, status: status, error: error) {
                return .success(answer)
            }
            return .failure(.http(status: status, retryAfter: retryAfterDuration(retryAfter, now: now), error: error))
        }
        // Answers whose status says it all (v1 logout is 204 without a body, v1 checkauthn 200 may be empty).
        switch (request, profile) {
        case (.logout, .v1):
            return .success(.loggedOut)
        case (.logout, .v2) where json?["logouts"]?.objectValue == nil:
            return .success(.loggedOut)
        case (.checkAuthentication, .v1):
            return .success(.authenticationStatus(true))
        default:
            break
        }
        guard let json else {
            return .failure(.malformed(status: status, reason: body.isEmpty ? "empty body" : "body is not JSON"))
        }
        let parsed: Result<BackendResponse, Malformed>
        switch (request, profile) {
        case (.wire, _):
            // Whole answers go back unparsed (`AdobePassClient.execute`); never reached with Adobe's shapes.
            parsed = .success(.wire(WireResponse(status: status, body: Array(body))))
        case (.registerClient, _):
            parsed = parseRegistration(json)
        case (.obtainAccessToken, _):
            parsed = parseAccessToken(json)
        case (.configuration, _):
            parsed = parseConfiguration(json)
        case (.createSession(let mvpd), .v2):
            parsed = parseSession(json, expiryField: "notAfter", requestedMVPD: mvpd)
        case (.createSession(let mvpd), .v1):
            parsed = parseSession(json, expiryField: "expires", requestedMVPD: mvpd)
        case (.pollProfile(_, let mvpd), .v2):
            parsed = parseProfiles(json, preferring: mvpd)
        case (.fetchProfile(let mvpd), .v2):
            parsed = parseProfiles(json, preferring: mvpd)
        case (.pollProfile, .v1), (.fetchProfile, .v1):
            parsed = parseAuthNToken(json)
        case (.checkAuthentication, _):
            parsed = parseProfileCount(json)
        case (.launchProfiles, _):
            parsed = parseProfileList(json).map { .profiles($0) }
        case (.authorize(let mvpd, let resource), .v2):
            parsed = parseDecisions(json, mvpd: mvpd).flatMap { decide(resource, in: $0, asMediaToken: false) }
        case (.mediaToken(let mvpd, let resource), .v2):
            parsed = parseDecisions(json, mvpd: mvpd).flatMap { decide(resource, in: $0, asMediaToken: true) }
        case (.preauthorize(let mvpd, _), .v2):
            parsed = parseDecisions(json, mvpd: mvpd).map { .preauthorization($0) }
        case (.authorize(_, let resource), .v1):
            parsed = parseV1Authorization(json, resource: resource)
        case (.mediaToken(_, let resource), .v1):
            parsed = parseV1MediaToken(json, resource: resource)
        case (.preauthorize, .v1):
            parsed = parseV1Preauthorization(json)
        case (.userMetadata(let mvpd), .v2):
            parsed = parseProfileAttributes(json, mvpd: mvpd)
        case (.userMetadata, .v1):
            parsed = parseV1UserMetadata(json)
        case (.logout, _):
            parsed = .success(.logoutInstructions(parseLogouts(json)))
        case (.partnerSession(let mvpd), _):
            parsed = parsePartnerSession(json, requestedMVPD: mvpd)
        case (.partnerProfile(_, let mvpd), _):
            parsed = parseProfiles(json, preferring: mvpd)
        }
        return parsed.mapError { .malformed(status: status, reason: $0.reason) }
    }

    /// v1 error statuses that are answers rather than failures: `tokens/authn` 404 (pending), `checkauthn` 403
    /// (not authenticated), `usermetadata` 412/404 (no authentication / no metadata), and an MVPD's denial on
    /// `authorize` or `tokens/media`.
    private static func v1StatusAnswer(request: BackendRequest, status: Int, error: EnhancedError?) -> BackendResponse? {
        switch (request, status) {
        case (.pollProfile, 404), (.fetchProfile, 404), (.fetchProfile, 410):
            return .profile(nil)
        case (.checkAuthentication, 403):
            return .authenticationStatus(false)
        case (.userMetadata, 412):
            return .userMetadata(nil)
        case (.userMetadata, 404):
            return .userMetadata(UserMetadata())
        case (.authorize(_, let resource), 403), (.mediaToken(_, let resource), 403):
            guard let error, error.code.hasPrefix("authorization_denied") else { return nil }
            return .authorization(AuthorizationDecision(resource: resource, authorized: false, error: error))
        default:
            return nil
        }
    }

    /// A classic v1 error body (`{"status", "message", "details"}`) expressed with the v1 enhanced code Adobe
    /// documents for the same condition (reference §9.4), so callers need to know one vocabulary; nil when the
    /// message names no such condition.
    static func v1ClassicError(status: Int, json: JSONValue) -> EnhancedError? {
        guard let message = json["message"]?.stringValue else { return nil }
        let details = json["details"]?.stringValue
        let text = (message + " " + (details ?? "")).lowercased()
        let code: String
        let action: ErrorAction
        if text.contains("not authenticated") || text.contains("authentication token expired") {
            code = text.contains("expired") ? "authentication_session_expired" : "authentication_session_missing"
            action = .authentication
        } else if text.contains("not authorized") && status == 403 {
            code = "authorization_denied_by_mvpd"
            action = .none
        } else if text.contains("too many resources") {
            code = "too_many_resources"
            action = .configuration
        } else if text.contains("'resource'") {
            code = "missing_resource"
            action = .none
        } else {
            return nil
        }
        // The action Adobe's v1 list gives the code (reference §9.4), so one reading serves both shapes.
        return EnhancedError(status: status, code: code, action: action, message: message, details: details)
    }

    /// `Retry-After` as delta-seconds or as an HTTP-date (IMF-fixdate, RFC 850 or asctime, RFC 9110 §10.2.3).
    /// A date in the past yields zero; anything unparseable yields nil.
    package static func retryAfterDuration(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // An absurdly long number still means "a long time", not "no hint".
            return .seconds(Int64(value) ?? Int64.max)
        }
        guard let date = httpDate(value) else { return nil }
        let milliseconds = (date.timeIntervalSince(now) * 1000).rounded(.up)
        guard milliseconds > 0 else { return .zero }
        return .milliseconds(Int64(exactly: milliseconds) ?? Int64.max)
    }

    /// An error body: an enhanced error (`code`, `status`, `action`, …), a DCR `{"error": …}` body, or nil when
    /// the body carries neither (HTML pages, classic v1 `{"status", "message"}`, empty bodies).
    package static func errorBody(_ body: Data) -> EnhancedError? {
        JSONValue.parse(body).flatMap { errorBody($0) }
    }

    static func errorBody(_ json: JSONValue) -> EnhancedError? {
        if let error = enhancedError(json) {
            return error
        }
        if let code = json["error"]?.stringValue {
            return EnhancedError(code: code, message: json["error_description"]?.stringValue)
        }
        // Some gateways wrap an enhanced error as `{"error": {…}}`.
        if let nested = json["error"], let error = enhancedError(nested) {
            return error
        }
        return nil
    }

    // MARK: - Success shapes

    private struct Malformed: Error {
        var reason: String
    }

    private static func enhancedError(_ json: JSONValue) -> EnhancedError? {
        guard let code = json["code"]?.stringValue else { return nil }
        return EnhancedError(
            status: json["status"]?.int64Value.flatMap { Int(exactly: $0) },
            code: code,
            action: json["action"]?.stringValue.map(ErrorAction.init(rawValue:)),
            message: json["message"]?.stringValue,
            details: json["details"]?.stringValue,
            helpUrl: json["helpUrl"]?.stringValue,
            trace: json["trace"]?.stringValue
        )
    }

    private static func parseRegistration(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let clientID = json["client_id"]?.stringValue, !clientID.isEmpty else {
            return .failure(Malformed(reason: "missing client_id"))
        }
        guard let clientSecret = json["client_secret"]?.stringValue, !clientSecret.isEmpty else {
            return .failure(Malformed(reason: "missing client_secret"))
        }
        return .success(.registered(ClientCredentials(clientID: clientID, clientSecret: clientSecret)))
    }

    private static func parseAccessToken(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let token = json["access_token"]?.stringValue, !token.isEmpty else {
            return .failure(Malformed(reason: "missing access_token"))
        }
        guard let expiresIn = json["expires_in"]?.int64Value, expiresIn >= 0 else {
            return .failure(Malformed(reason: "missing or invalid expires_in"))
        }
        return .success(.accessToken(token: token, expiresIn: .seconds(expiresIn)))
    }

    /// v2 `requestor.mvpds[]`; the v1 JSON rendering is also accepted with `mvpds.mvpd` (XML-style nesting)
    /// or a single `mvpd` object instead of an array.
    private static func parseConfiguration(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let requestor = json["requestor"], requestor.objectValue != nil else {
            return .failure(Malformed(reason: "missing requestor"))
        }
        guard let list = requestor["mvpds"] else {
            return .failure(Malformed(reason: "missing requestor.mvpds"))
        }
        let entries: [JSONValue]
        if let array = list.arrayValue {
            entries = array
        } else if let nested = list["mvpd"] {
            entries = nested.arrayValue ?? [nested]
        } else {
            return .failure(Malformed(reason: "requestor.mvpds is not a list"))
        }
        var mvpds: [MVPD] = []
        mvpds.reserveCapacity(entries.count)
        for entry in entries {
            guard let id = entry["id"]?.stringValue, !id.isEmpty else {
                return .failure(Malformed(reason: "MVPD without id"))
            }
            // The picker needs some label; the id is what the backend itself falls back to in its logs.
            let displayName = entry["displayName"]?.stringValue ?? id
            mvpds.append(
                MVPD(
                    id: id,
                    displayName: displayName,
                    logoURL: entry["logoUrl"]?.stringValue,
                    platformMappingId: entry["platformMappingId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                    boardingStatus: entry["boardingStatus"]?.stringValue.flatMap(MVPD.BoardingStatus.init(rawValue:)),
                    enablePlatformServices: platformFlag(entry["enablePlatformServices"]) ?? false,
                    displayInPlatformPicker: platformFlag(entry["displayInPlatformPicker"]) ?? false,
                    enforcePlatformPermissions: platformFlag(entry["enforcePlatformPermissions"]) ?? true,
                    isTempPass: platformFlag(entry["isTempPass"]) ?? false
                )
            )
        }
        return .success(.configuration(mvpds: mvpds))
    }

    /// An MVPD platform flag: a JSON boolean (v2) or the text `"true"`/`"false"` of the v1 rendering of
    /// its XML list; anything else counts as absent, so a stray value never fails the configuration.
    private static func platformFlag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag)?: flag
        case .string(let text)?:
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true": true
            case "false": false
            default: nil
            }
        default: nil
        }
    }

    /// v2 session (`code`, `notAfter` as a string of epoch ms) or v1 regcode (`code`, `expires` as a number).
    /// Both encodings are accepted for either field. A v2 answer `actionName: "authorize"` without a code means
    /// the device is already authenticated with its `mvpd`.
    private static func parseSession(
        _ json: JSONValue,
        expiryField: String,
        requestedMVPD: String?
    ) -> Result<BackendResponse, Malformed> {
        let answeredMVPD = json["mvpd"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if json["actionName"]?.stringValue == "authorize", json["code"]?.stringValue?.isEmpty ?? true {
            guard let mvpd = answeredMVPD ?? requestedMVPD else {
                return .failure(Malformed(reason: "authorize answer without mvpd"))
            }
            return .success(.alreadyAuthenticated(mvpd: mvpd))
        }
        guard let code = json["code"]?.stringValue, !code.isEmpty else {
            let action = json["actionName"]?.stringValue.map { " (actionName \($0))" } ?? ""
            return .failure(Malformed(reason: "no code in session response\(action)"))
        }
        guard let expires = json[expiryField]?.int64Value else {
            return .failure(Malformed(reason: "missing or invalid \(expiryField)"))
        }
        let mvpd = answeredMVPD ?? requestedMVPD
        return .success(.session(IssuedCode(code: code, expiresEpochMs: expires, mvpd: mvpd)))
    }

    /// `sessions/sso/Apple`: `partner_profile` carries the SAML request for the TV Provider; `authorize` means a
    /// profile is already held; the fallbacks (`authenticate` with a code, `resume`) continue as the code flow.
    private static func parsePartnerSession(_ json: JSONValue, requestedMVPD: String) -> Result<BackendResponse, Malformed> {
        if json["actionName"]?.stringValue == "partner_profile" {
            guard let request = json["authenticationRequest"]?["request"]?.stringValue, !request.isEmpty else {
                return .failure(Malformed(reason: "partner_profile answer without authenticationRequest.request"))
            }
            return .success(.partnerAuthenticationRequest(request: request))
        }
        return parseSession(json, expiryField: "notAfter", requestedMVPD: requestedMVPD)
    }

    /// Every profile of a v2 `{"profiles": {mvpd: {…}}}` answer, in key order.
    private static func parseProfileList(_ json: JSONValue) -> Result<[AuthProfile], Malformed> {
        parseProfileCandidates(json).map { $0.map(\.profile).sorted { $0.mvpd < $1.mvpd } }
    }

    private static func parseProfileCandidates(_ json: JSONValue) -> Result<[(mvpd: String, profile: AuthProfile, rank: Int)], Malformed> {
        guard let profiles = json["profiles"]?.objectValue else {
            return .failure(Malformed(reason: "missing profiles map"))
        }
        var candidates: [(mvpd: String, profile: AuthProfile, rank: Int)] = []
        for (key, value) in profiles {
            guard let notAfter = value["notAfter"]?.int64Value else {
                return .failure(Malformed(reason: "profile \(key) without notAfter"))
            }
            let userAttribute = value["attributes"]?["userID"]
            // Encrypted attribute values are opaque without the programmer's private key.
            let userID = userAttribute?["state"]?.stringValue == "enc" ? nil : userAttribute?["value"]?.stringValue
            candidates.append(
                (
                    key,
                    AuthProfile(
                        mvpd: key,
                        userID: userID,
                        expiresEpochMs: notAfter,
                        source: value["type"]?.stringValue == "appleSSO" ? .apple : .adobe,
                        type: value["type"]?.stringValue.flatMap { $0.isEmpty ? nil : ProfileType(rawValue: $0) }
                    ),
                    profileRank(value["type"]?.stringValue)
                )
            )
        }
        return .success(candidates)
    }

    /// v2 `{"profiles": {mvpd: MvpdProfile}}`; an empty map means the code is still pending. The profile of
    /// `preferred` wins when present.
    private static func parseProfiles(_ json: JSONValue, preferring preferred: String?) -> Result<BackendResponse, Malformed> {
        let candidates: [(mvpd: String, profile: AuthProfile, rank: Int)]
        switch parseProfileCandidates(json) {
        case .success(let found): candidates = found
        case .failure(let malformed): return .failure(malformed)
        }
        // Normally one code yields one profile; with several, a regular MVPD profile beats a single sign-on one,
        // which beats temporary/degraded ones, then the longest-lived wins, then the key order keeps the choice
        // deterministic.
        let chosen = candidates.min { lhs, rhs in
            if let preferred, (lhs.mvpd == preferred) != (rhs.mvpd == preferred) { return lhs.mvpd == preferred }
            if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
            if lhs.profile.expiresEpochMs != rhs.profile.expiresEpochMs {
                return lhs.profile.expiresEpochMs > rhs.profile.expiresEpochMs
            }
            return lhs.mvpd < rhs.mvpd
        }
        return .success(.profile(chosen?.profile))
    }

    /// v2 `{"logouts": {mvpd: {actionName, actionType, mvpd, url}}}`, in MVPD order; members without an
    /// `actionName` are left out.
    private static func parseLogouts(_ json: JSONValue) -> [LogoutInstruction] {
        (json["logouts"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.compactMap { key, value in
            guard let name = value["actionName"]?.stringValue else { return nil }
            return LogoutInstruction(
                mvpd: value["mvpd"]?.stringValue ?? key,
                action: LogoutInstruction.Action(name),
                actionType: value["actionType"]?.stringValue,
                url: value["url"]?.stringValue
            )
        }
    }

    /// The single sign-on profile types (sso.md §2.1): the user is authenticated with the MVPD through another
    /// app's or device's login (`platformSSO`, `serviceTokenSSO`) or the system's TV Provider account (`appleSSO`).
    static let singleSignOnProfileTypes: Set<String> = ["platformSSO", "serviceTokenSSO", "appleSSO"]

    /// Preference among profile types: the app's own `regular` login, then single sign-on profiles, then anything
    /// else (`temporary`, `degraded`, unknown).
    private static func profileRank(_ type: String?) -> Int {
        guard let type else { return 2 }
        if type == "regular" { return 0 }
        return singleSignOnProfileTypes.contains(type) ? 1 : 2
    }

    /// v2 `{"profiles": {…}}` for `checkAuthentication`: authenticated when the map is not empty (a single sign-on
    /// profile counts: the backend answers decisions with it).
    private static func parseProfileCount(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let profiles = json["profiles"]?.objectValue else {
            return .failure(Malformed(reason: "missing profiles map"))
        }
        return .success(.authenticationStatus(!profiles.isEmpty))
    }

    /// v2 profile attributes as user metadata: `{"profiles": {mvpd: {"attributes": {name: {value, state}}}}}`.
    /// An empty map means the backend holds no profile for the MVPD.
    private static func parseProfileAttributes(_ json: JSONValue, mvpd: String) -> Result<BackendResponse, Malformed> {
        guard let profiles = json["profiles"]?.objectValue else {
            return .failure(Malformed(reason: "missing profiles map"))
        }
        guard let profile = profiles[mvpd] ?? (profiles.count == 1 ? profiles.values.first : nil) else {
            return .success(.userMetadata(nil))
        }
        var metadata = UserMetadata()
        for (name, attribute) in profile["attributes"]?.objectValue ?? [:] {
            metadata.values[name] = attribute["value"] ?? .null
            if attribute["state"]?.stringValue == "enc" { metadata.encrypted.insert(name) }
        }
        return .success(.userMetadata(metadata))
    }

    /// v2 `{"decisions": [{resource, authorized, token?, notAfter?, error?}]}`.
    private static func parseDecisions(_ json: JSONValue, mvpd: String) -> Result<[AuthorizationDecision], Malformed> {
        guard let items = json["decisions"]?.arrayValue else {
            return .failure(Malformed(reason: "missing decisions list"))
        }
        var decisions: [AuthorizationDecision] = []
        for item in items {
            guard let resource = item["resource"]?.stringValue else {
                return .failure(Malformed(reason: "decision without resource"))
            }
            guard case .bool(let authorized)? = item["authorized"] else {
                return .failure(Malformed(reason: "decision for \(resource) without authorized"))
            }
            var token: MediaToken?
            if let body = item["token"], body.objectValue != nil {
                guard let serialized = body["serializedToken"]?.stringValue, !serialized.isEmpty else {
                    return .failure(Malformed(reason: "token for \(resource) without serializedToken"))
                }
                token = MediaToken(resource: resource, serializedToken: serialized, expiresEpochMs: body["notAfter"]?.int64Value)
            }
            decisions.append(
                AuthorizationDecision(
                    resource: resource,
                    authorized: authorized,
                    expiresEpochMs: item["notAfter"]?.int64Value,
                    token: token,
                    error: item["error"].flatMap(enhancedError),
                    source: item["source"]?.stringValue.flatMap { $0.isEmpty ? nil : DecisionSource(rawValue: $0) }
                )
            )
        }
        return .success(decisions)
    }

    /// The decision for `resource` (or the only one) as an authorization or, for `tokens/media`, its token.
    private static func decide(_ resource: String, in decisions: [AuthorizationDecision], asMediaToken: Bool) -> Result<BackendResponse, Malformed> {
        guard let decision = decisions.first(where: { $0.resource == resource }) ?? (decisions.count == 1 ? decisions.first : nil) else {
            return .failure(Malformed(reason: "no decision for \(resource)"))
        }
        if asMediaToken, decision.authorized {
            guard let token = decision.token else { return .failure(Malformed(reason: "authorized decision without a media token")) }
            return .success(.mediaToken(token))
        }
        return .success(.authorization(decision))
    }

    /// v1 AuthZ token `{"mvpd", "resource", "requestor", "expires": "<epoch ms string>"}`.
    private static func parseV1Authorization(_ json: JSONValue, resource: String) -> Result<BackendResponse, Malformed> {
        guard json["mvpd"]?.stringValue != nil || json["resource"]?.stringValue != nil else {
            return .failure(Malformed(reason: "not an authorization token"))
        }
        return .success(
            .authorization(
                AuthorizationDecision(
                    resource: json["resource"]?.stringValue ?? resource,
                    authorized: true,
                    expiresEpochMs: json["expires"]?.int64Value
                )
            )
        )
    }

    /// v1 short media token `{"resource", "expires", "serializedToken", "mvpdId", …}`.
    private static func parseV1MediaToken(_ json: JSONValue, resource: String) -> Result<BackendResponse, Malformed> {
        guard let serialized = json["serializedToken"]?.stringValue, !serialized.isEmpty else {
            return .failure(Malformed(reason: "missing serializedToken"))
        }
        return .success(
            .mediaToken(
                MediaToken(
                    resource: json["resource"]?.stringValue ?? resource,
                    serializedToken: serialized,
                    expiresEpochMs: json["expires"]?.int64Value
                )
            )
        )
    }

    /// v1 `{"resources": [{"id", "authorized", "error"?}]}`.
    private static func parseV1Preauthorization(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let items = json["resources"]?.arrayValue else {
            return .failure(Malformed(reason: "missing resources list"))
        }
        var decisions: [AuthorizationDecision] = []
        for item in items {
            guard let id = item["id"]?.stringValue else { return .failure(Malformed(reason: "resource without id")) }
            guard case .bool(let authorized)? = item["authorized"] else {
                return .failure(Malformed(reason: "resource \(id) without authorized"))
            }
            decisions.append(AuthorizationDecision(resource: id, authorized: authorized, error: item["error"].flatMap(enhancedError)))
        }
        return .success(.preauthorization(decisions))
    }

    /// v1 `{"updated": <s>, "encrypted": [names], "data": {name: value}}`.
    private static func parseV1UserMetadata(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let data = json["data"]?.objectValue else {
            return .failure(Malformed(reason: "missing data"))
        }
        let encrypted = Set((json["encrypted"]?.arrayValue ?? []).compactMap(\.stringValue))
        return .success(.userMetadata(UserMetadata(values: data, encrypted: encrypted)))
    }

    /// v1 AuthN token `{"mvpd", "userId", "expires": "<epoch ms string>"}`.
    private static func parseAuthNToken(_ json: JSONValue) -> Result<BackendResponse, Malformed> {
        guard let mvpd = json["mvpd"]?.stringValue, !mvpd.isEmpty else {
            return .failure(Malformed(reason: "missing mvpd"))
        }
        guard let expires = json["expires"]?.int64Value else {
            return .failure(Malformed(reason: "missing or invalid expires"))
        }
        return .success(.profile(AuthProfile(mvpd: mvpd, userID: json["userId"]?.stringValue, expiresEpochMs: expires)))
    }

    // MARK: - HTTP-date

    private static func httpDate(_ value: String) -> Date? {
        // asctime pads single-digit days with a space; collapse runs of spaces so one pattern fits.
        let normalized = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for pattern in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = pattern
            if let date = formatter.date(from: normalized) {
                return date
            }
        }
        return nil
    }
}
