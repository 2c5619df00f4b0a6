/// What kind of app a device emulates: the one place a persona's differences live (``PersonaRules``).
///
/// Adobe ends the AccessEnabler SDKs (end of support 2026-05-31) and REST API v1 (2025-12-31), both at end of
/// life at the end of 2026, and names REST API v2 called by the app itself as the way forward (Adobe Pass product
/// announcements, `help/authentication/product-announcements.md`).
package enum DevicePersona: String, Sendable, Hashable, Codable, CaseIterable {
    /// An app built on the AccessEnabler SDK: the source documents' cookbook, AccessEnabler callbacks.
    case accessEnabler = "accessenabler"
    /// An app calling REST API v2 itself, as Adobe's REST v2 cookbook, checklist and flow pages lay down.
    case restV2 = "rest-v2"

    /// The persona's rules.
    package var rules: PersonaRules {
        switch self {
        case .accessEnabler: .accessEnabler
        case .restV2: .restV2
        }
    }
}

/// Which device headers a REST v2 call carries.
package enum DeviceHeaderPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// `AP-Device-Identifier` and `X-Device-Info` only on the operations Adobe's OpenAPI file lists them for
    /// (`restApiV2.json`: not on `configuration` nor the code poll).
    case oas
    /// On every `/api/v2` request: the REST v2 checklist, section 7, marked mandatory ("send
    /// AP-Device-Identifier for every REST API v2 request", the same for `X-Device-Info`).
    case everyCall = "every-call"
}

/// The app-visible vocabulary a device's events use.
package enum EventVocabulary: String, Sendable, Hashable, Codable {
    /// AccessEnabler callbacks (`setAuthenticationStatus`, `displayProviderDialog`, …) and diagnostics.
    case accessEnablerCallbacks
    /// What a native app's own code sees of REST v2 (`app.…` events, ``AppEvent``): it has no callbacks.
    case appStates
}

/// A persona's behaviour as data: each field is one way the two kinds of app differ on the wire or in what the
/// lab sees, with the document that says so beside it. The engine reads these; it does not branch on the persona.
///
/// Document tags are those of `rest-v2-native-app.md`: CL (REST v2 checklist), AIR (its AI rules), CB (client-to-
/// server cookbook), FAQ, F-2ND (second-screen flow), H-XDI (`X-Device-Info` header page), THR (throttling).
package struct PersonaRules: Sendable, Hashable {
    /// `setRequestor` (the app opening) asks the backend which profiles it holds (`GET /profiles`, or
    /// `/profiles/{mvpd}` with a known MVPD) rather than answering from local storage: CB step 2, FAQ
    /// (2026-01-28), Apple cookbook note of 2026-01-16 ("must use").
    package var launchCheck: Bool
    /// How long a loaded MVPD list is reused; nil: fetched on every `setRequestor`, as the SDK does. Set: the
    /// configuration is asked for only when the user must pick a provider (CL section 2, mandatory), and cached
    /// (AIR: 2–3 minutes, CL: 3–5 minutes; 3 minutes satisfies both).
    package var configurationCache: Duration?
    /// A login without an MVPD sends `POST sessions` without one (`actionName: resume`, the second screen picks):
    /// CB step 4, CL recommended practice 3. The SDK always shows its picker first.
    package var codeFirstLogin: Bool
    /// Device headers on every call, or where the OpenAPI file lists them.
    package var deviceHeaders: DeviceHeaderPolicy
    /// `Accept` and the decisions' `Content-Type` carry `charset=utf-8`: every REST v2 API page ("if specified,
    /// must be `application/json;charset=utf-8`"; decisions: "must be").
    package var jsonCharset: Bool
    /// `connectionType` in `X-Device-Info`, which H-XDI marks required (its tvOS sample sends Reachability's
    /// `WiFi`); nil: left out, as the SDK persona's recorded header does.
    package var connectionType: String?
    /// `User-Agent` when the fleet sets none: the SDK's, or the app's own HTTP stack (URLSession's
    /// `App/build CFNetwork/… Darwin/…` on tvOS), since a native app has no SDK to name (AIR section 7).
    package var defaultUserAgent: String
    /// The shortest wait before a call answered 429 is sent again: THR (Adobe's 429 carries no `Retry-After`;
    /// "wait at least 1 second"); nil: the device's bounded backoff alone decides.
    package var minimumWaitAfterThrottle: Duration?
    /// Whether a throttled `setRequestor`, `getAuthorization`, `checkPreauthorizedResources` or `getMetadata` reaches
    /// the app at once, as the SDK's status (`CFG429`, `Z100`, `P100`, an empty `setMetadataStatus`), rather than after
    /// the device's retries: Adobe's throttling page, "SDK implementation disambiguation" ("Upon reaching the throttle
    /// limit using `getAuthorization` … the SDK will return a Z100 error code").
    package var reportsThrottlingAtOnce: Bool
    /// The most times a native app sends a throttled call again: "at most 2–3 retries" (the checklist's coding
    /// rules), waiting ``minimumWaitAfterThrottle`` or more; nil: the device's stage retries.
    package var throttledRetries: Int?
    /// What the lab sees: callbacks or app states.
    package var vocabulary: EventVocabulary

    /// The AccessEnabler SDK, as the source documents' cookbook has it.
    package static let accessEnabler = PersonaRules(
        launchCheck: false,
        configurationCache: nil,
        codeFirstLogin: false,
        deviceHeaders: .oas,
        jsonCharset: false,
        connectionType: nil,
        defaultUserAgent: ClientIdentity.sdkUserAgent,
        minimumWaitAfterThrottle: nil,
        reportsThrottlingAtOnce: true,
        throttledRetries: nil,
        vocabulary: .accessEnablerCallbacks
    )

    /// A native REST v2 app, as Adobe's REST v2 documents have it.
    package static let restV2 = PersonaRules(
        launchCheck: true,
        configurationCache: .seconds(180),
        codeFirstLogin: true,
        deviceHeaders: .everyCall,
        jsonCharset: true,
        connectionType: "WiFi",
        defaultUserAgent: "regcoded-tv/1 CFNetwork/1494.0.7 Darwin/23.0.0",
        minimumWaitAfterThrottle: .seconds(1),
        reportsThrottlingAtOnce: false,
        throttledRetries: 2,
        vocabulary: .appStates
    )
}
