/// AccessEnabler (iOS/tvOS spellings) constants the emulated devices report.
public enum AccessEnabler {
    public static let statusSuccess: Int64 = 1
    public static let statusError: Int64 = 0

    public static let userAuthenticated = ""
    public static let userNotAuthenticatedError = "User Not Authenticated Error"
    public static let userNotAuthorizedError = "User Not Authorized Error"
    public static let providerNotSelectedError = "Provider Not Selected Error"
    public static let genericAuthenticationError = "Generic Authentication Error"
    public static let genericAuthorizationError = "Generic Authorization Error"

    /// `sendTrackingData` event types.
    public enum TrackingEvent: Int64, Sendable, CaseIterable {
        case authenticationDetection = 0
        case authorizationDetection = 1
        case mvpdSelection = 2

        public var name: String {
            switch self {
            case .authenticationDetection: "authenticationDetection"
            case .authorizationDetection: "authorizationDetection"
            case .mvpdSelection: "mvpdSelection"
            }
        }
    }

    /// iOS tracking arrays carry strings: booleans as YES/NO, missing values as None.
    public static let trackingYes = "YES"
    public static let trackingNo = "NO"
    public static let trackingNone = "None"
}
