/// The `errorId` of an advanced-status (`status:`) callback.
///
/// A struct rather than a closed enum: configuration failures carry the HTTP status in the code
/// (`CFG503`), and a log written by another version may hold ids this one does not know.
public struct StatusID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    // Login with a registration code.
    /// A new registration code to show (level `success`, the code as message).
    public static let registrationCode = StatusID(rawValue: "REGCODE")
    /// The code expired or was refused before anyone logged in with it (regcoded's own id: Adobe documents none).
    public static let registrationCodeExpired = StatusID(rawValue: "REG410")
    /// No code could be obtained, or polling gave up.
    public static let registrationCodeFailed = StatusID(rawValue: "REG500")

    // Client registration (DCR).
    /// The app is not registered: client registration failed.
    public static let registrationFailed = StatusID(rawValue: "R400")
    /// No access token could be obtained.
    public static let tokenFailed = StatusID(rawValue: "R401")
    /// A v1 request signature was refused.
    public static let signatureRefused = StatusID(rawValue: "SEC403")

    // Configuration (`setRequestor`).
    public static let configurationUnreachable = StatusID(rawValue: "CFG404")
    public static let configurationMalformed = StatusID(rawValue: "CFG500")
    public static let configurationThrottled = StatusID(rawValue: "CFG429")
    public static let configurationRefused = StatusID(rawValue: "CFG400")
    /// A configuration request answered with a server error: `CFG` and the HTTP status.
    public static func configurationServerError(httpStatus: Int) -> StatusID {
        StatusID(rawValue: "CFG\(httpStatus)")
    }

    // Authorization and preauthorization.
    /// Not authorized (a deny decision, or a throttled `getAuthorization`).
    public static let authorizationDenied = StatusID(rawValue: "Z100")
    /// The authorization request could not be completed (network, server error).
    public static let authorizationUnavailable = StatusID(rawValue: "Z120")
    /// The authorization request was malformed (bad resource).
    public static let authorizationInvalidRequest = StatusID(rawValue: "Z130")
    public static let authorizationInternalError = StatusID(rawValue: "Z500")
    /// Denied under an authzNone degradation rule.
    public static let authorizationDegraded = StatusID(rawValue: "Z169")
    /// A TempPass ran out (duration or resources limit).
    public static let tempPassExpired = StatusID(rawValue: "N111")
    /// The backend holds no (valid) authentication for the device.
    public static let authenticationNotFound = StatusID(rawValue: "N130")
    /// The MVPD picker was cancelled (`setSelectedProvider(nil)`).
    public static let providerSelectionCancelled = StatusID(rawValue: "N005")
    /// Preauthorization failed.
    public static let preauthorizationFailed = StatusID(rawValue: "P100")
    /// The app's own stored authentication was bound to a device id that has since changed; it was
    /// deleted (DOC `[ERR]`, level warning; single sign-on storage).
    public static let deviceIdChanged = StatusID(rawValue: "SEC412")
}

/// The `level` of an advanced-status callback.
public enum StatusLevel: String, Sendable, Codable {
    case success
    case info
    case warning
    case error
}
