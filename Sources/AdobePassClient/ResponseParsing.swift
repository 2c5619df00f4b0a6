import Foundation
import RegcodeEngine

/// Turns a raw backend answer (status, `Retry-After`, body) into the engine's result types.
///
/// Pure and I/O-free; `AdobePassClient` uses it after each exchange.
public enum AdobePassResponseParser {
    /// Interprets one answer to `request`.
    /// - Parameters:
    ///   - request: What was asked; selects the success shape.
    ///   - profile: The API the call went to (v1 answers differ, e.g. 404 means "pending" on `tokens/authn`).
    ///   - status: The HTTP status code.
    ///   - retryAfter: The raw `Retry-After` header, if any.
    ///   - body: The response body.
    ///   - now: Reference time for an HTTP-date `Retry-After`.
    public static func parse(
        request: BackendRequest,
        profile: APIProfile,
        status: Int,
        retryAfter: String?,
        body: Data,
        now: Date = Date()
    ) -> Result<BackendResponse, BackendFailure> {
        if profile == .v1, case .pollProfile = request, status == 404 {
            return .success(.profile(nil))
        }
        guard (200..<300).contains(status) else {
            return .failure(
                .http(status: status, retryAfter: retryAfterDuration(retryAfter, now: now), error: errorBody(body))
            )
        }
        guard let json = ResponseJSON.parse(body) else {
            return .failure(.malformed(status: status, reason: body.isEmpty ? "empty body" : "body is not JSON"))
        }
        let parsed: Result<BackendResponse, Malformed>
        switch (request, profile) {
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
        case (.pollProfile, .v2):
            parsed = parseProfiles(json)
        case (.pollProfile, .v1):
            parsed = parseAuthNToken(json)
        }
        return parsed.mapError { .malformed(status: status, reason: $0.reason) }
    }

    /// `Retry-After` as delta-seconds or as an HTTP-date (IMF-fixdate, RFC 850 or asctime, RFC 9110 §10.2.3).
    /// A date in the past yields zero; anything unparseable yields nil.
    public static func retryAfterDuration(_ value: String?, now: Date = Date()) -> Duration? {
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
    public static func errorBody(_ body: Data) -> EnhancedError? {
        guard let json = ResponseJSON.parse(body) else { return nil }
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

    private static func enhancedError(_ json: ResponseJSON) -> EnhancedError? {
        guard let code = json["code"]?.stringValue else { return nil }
        return EnhancedError(
            status: json["status"]?.int64Value.flatMap { Int(exactly: $0) },
            code: code,
            action: json["action"]?.stringValue,
            message: json["message"]?.stringValue,
            details: json["details"]?.stringValue,
            helpUrl: json["helpUrl"]?.stringValue,
            trace: json["trace"]?.stringValue
        )
    }

    private static func parseRegistration(_ json: ResponseJSON) -> Result<BackendResponse, Malformed> {
        guard let clientID = json["client_id"]?.stringValue, !clientID.isEmpty else {
            return .failure(Malformed(reason: "missing client_id"))
        }
        guard let clientSecret = json["client_secret"]?.stringValue, !clientSecret.isEmpty else {
            return .failure(Malformed(reason: "missing client_secret"))
        }
        return .success(.registered(ClientCredentials(clientID: clientID, clientSecret: clientSecret)))
    }

    private static func parseAccessToken(_ json: ResponseJSON) -> Result<BackendResponse, Malformed> {
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
    private static func parseConfiguration(_ json: ResponseJSON) -> Result<BackendResponse, Malformed> {
        guard let requestor = json["requestor"], requestor.objectValue != nil else {
            return .failure(Malformed(reason: "missing requestor"))
        }
        guard let list = requestor["mvpds"] else {
            return .failure(Malformed(reason: "missing requestor.mvpds"))
        }
        let entries: [ResponseJSON]
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
            mvpds.append(MVPD(id: id, displayName: displayName, logoURL: entry["logoUrl"]?.stringValue))
        }
        return .success(.configuration(mvpds: mvpds))
    }

    /// v2 session (`code`, `notAfter` as a string of epoch ms) or v1 regcode (`code`, `expires` as a number).
    /// Both encodings are accepted for either field.
    private static func parseSession(
        _ json: ResponseJSON,
        expiryField: String,
        requestedMVPD: String?
    ) -> Result<BackendResponse, Malformed> {
        guard let code = json["code"]?.stringValue, !code.isEmpty else {
            let action = json["actionName"]?.stringValue.map { " (actionName \($0))" } ?? ""
            return .failure(Malformed(reason: "no code in session response\(action)"))
        }
        guard let expires = json[expiryField]?.int64Value else {
            return .failure(Malformed(reason: "missing or invalid \(expiryField)"))
        }
        let mvpd = json["mvpd"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? requestedMVPD
        return .success(.session(IssuedCode(code: code, expiresEpochMs: expires, mvpd: mvpd)))
    }

    /// v2 `{"profiles": {mvpd: MvpdProfile}}`; an empty map means the code is still pending.
    private static func parseProfiles(_ json: ResponseJSON) -> Result<BackendResponse, Malformed> {
        guard let profiles = json["profiles"]?.objectValue else {
            return .failure(Malformed(reason: "missing profiles map"))
        }
        var candidates: [(mvpd: String, profile: AuthProfile, regular: Bool)] = []
        for (key, value) in profiles {
            guard let notAfter = value["notAfter"]?.int64Value else {
                return .failure(Malformed(reason: "profile \(key) without notAfter"))
            }
            let userAttribute = value["attributes"]?["userID"]
            // Encrypted attribute values are opaque without the programmer's private key.
            let userID = userAttribute?["state"]?.stringValue == "enc" ? nil : userAttribute?["value"]?.stringValue
            candidates.append((key, AuthProfile(mvpd: key, userID: userID, expiresEpochMs: notAfter),
                               value["type"]?.stringValue == "regular"))
        }
        // Normally one code yields one profile; with several, a regular MVPD profile beats temporary/degraded
        // ones, then the longest-lived wins, then the key order keeps the choice deterministic.
        let chosen = candidates.min { lhs, rhs in
            if lhs.regular != rhs.regular { return lhs.regular }
            if lhs.profile.expiresEpochMs != rhs.profile.expiresEpochMs {
                return lhs.profile.expiresEpochMs > rhs.profile.expiresEpochMs
            }
            return lhs.mvpd < rhs.mvpd
        }
        return .success(.profile(chosen?.profile))
    }

    /// v1 AuthN token `{"mvpd", "userId", "expires": "<epoch ms string>"}`.
    private static func parseAuthNToken(_ json: ResponseJSON) -> Result<BackendResponse, Malformed> {
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
