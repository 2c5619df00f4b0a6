/// The `errorId` of an advanced-status (`status:`) callback.
///
/// A struct rather than a closed enum: configuration failures carry the HTTP status in the code
/// (`CFG503`), and a log written by another version may hold ids this one does not know.
package struct StatusID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    // Login with a registration code.
    /// A new registration code to show (level `success`, the code as message).
    package static let registrationCode = StatusID(rawValue: "REGCODE")
    /// The code expired or was refused before anyone logged in with it (regcoded's own id: Adobe documents none).
    package static let registrationCodeExpired = StatusID(rawValue: "REG410")
    /// No code could be obtained, or polling gave up.
    package static let registrationCodeFailed = StatusID(rawValue: "REG500")

    // Client registration (DCR).
    /// The app is not registered: client registration failed.
    package static let registrationFailed = StatusID(rawValue: "R400")
    /// No access token could be obtained.
    package static let tokenFailed = StatusID(rawValue: "R401")
    /// A v1 request signature was refused.
    package static let signatureRefused = StatusID(rawValue: "SEC403")

    // Configuration (`setRequestor`).
    package static let configurationUnreachable = StatusID(rawValue: "CFG404")
    package static let configurationMalformed = StatusID(rawValue: "CFG500")
    package static let configurationThrottled = StatusID(rawValue: "CFG429")
    package static let configurationRefused = StatusID(rawValue: "CFG400")
    /// A configuration request answered with a server error: `CFG` and the HTTP status.
    package static func configurationServerError(httpStatus: Int) -> StatusID {
        StatusID(rawValue: "CFG\(httpStatus)")
    }

    // Authorization and preauthorization.
    /// Not authorized (a deny decision, or a throttled `getAuthorization`).
    package static let authorizationDenied = StatusID(rawValue: "Z100")
    /// The authorization request could not be completed (network, server error).
    package static let authorizationUnavailable = StatusID(rawValue: "Z120")
    /// The authorization request was malformed (bad resource).
    package static let authorizationInvalidRequest = StatusID(rawValue: "Z130")
    package static let authorizationInternalError = StatusID(rawValue: "Z500")
    /// Denied under an authzNone degradation rule.
    package static let authorizationDegraded = StatusID(rawValue: "Z169")
    /// A TempPass ran out (duration or resources limit), level warning.
    package static let tempPassExpired = StatusID(rawValue: "N111")
    /// `N010`, warning: authenticated under an AuthNAll degradation rule (a `degraded` profile, issuer Adobe).
    package static let authenticatedDegraded = StatusID(rawValue: "N010")
    /// `N011`, info: authenticated with TempPass (a `temporary` profile).
    package static let authenticatedTempPass = StatusID(rawValue: "N011")
    /// `Z010`, warning: authorized under an AuthNAll or AuthZAll degradation rule (decision `source: degradation`).
    package static let authorizedDegraded = StatusID(rawValue: "Z010")
    /// `Z011`, info: authorized with TempPass (decision `source: temppass`).
    package static let authorizedTempPass = StatusID(rawValue: "Z011")
    /// The backend holds no (valid) authentication for the device.
    package static let authenticationNotFound = StatusID(rawValue: "N130")
    /// The MVPD picker was cancelled (`setSelectedProvider(nil)`), or the Apple TV Provider picker was (`N005`, info).
    package static let providerSelectionCancelled = StatusID(rawValue: "N005")
    /// Apple single sign-on (VideoSubscriberAccount, tvOS/iOS only; DOC `[ASSO]`, `[ERR]`).
    /// `VSA203`, info: the app logged out, but its authentication came from the TV Provider account, which
    /// only the user can end (Settings → Accounts → TV Provider). Fired by `logout`.
    package static let tvProviderSignOutRequired = StatusID(rawValue: "VSA203")
    /// `VSA403`: the app's TV Provider permission is denied (or restricted, INFERRED). Only in `[ASSO]`;
    /// its level (info) is INFERRED.
    package static let tvProviderAccessDenied = StatusID(rawValue: "VSA403")
    /// `VSA404`, info: the app's TV Provider permission is undetermined (the user was never asked).
    package static let tvProviderAccessUndetermined = StatusID(rawValue: "VSA404")
    /// `VSA503`, info: the VideoSubscriberAccount metadata request failed during `getAuthentication`; the
    /// regular flow follows, context in `message`.
    package static let tvProviderUnavailable = StatusID(rawValue: "VSA503")
    /// `APPL`, error: VideoSubscriberAccount failed during `setRequestor`; `details` holds the VSA error.
    /// Adobe also spells it `AAPL`; `[ASSO]` spells it `APPL`, which is what regcoded emits.
    package static let appleSSOError = StatusID(rawValue: "APPL")
    /// `APPL_ERROR`, error: VideoSubscriberAccount failed during `checkAuthentication` (user signed in at
    /// system level); `details` holds the VSA error. Also spelled `AAPL_ERROR` by Adobe.
    package static let appleSSOAuthenticationError = StatusID(rawValue: "APPL_ERROR")
    /// `N003`, info: the user chose "Other TV Provider" in the Apple picker; `displayProviderDialog` follows.
    package static let otherTVProviderSelected = StatusID(rawValue: "N003")
    /// `N004`, info: the user chose, in the Apple picker, a provider this requestor does not support
    /// (no integration, or single sign-on disabled for it); `displayProviderDialog` follows.
    package static let tvProviderNotSupported = StatusID(rawValue: "N004")
    /// Preauthorization failed.
    package static let preauthorizationFailed = StatusID(rawValue: "P100")
    /// The app's own stored authentication was bound to a device id that has since changed; it was
    /// deleted (DOC `[ERR]`, level warning; single sign-on storage).
    package static let deviceIdChanged = StatusID(rawValue: "SEC412")
}

/// The `level` of an advanced-status callback.
package enum StatusLevel: String, Sendable, Codable {
    case success
    case info
    case warning
    case error
}
