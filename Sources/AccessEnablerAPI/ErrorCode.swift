/// The error strings of `setAuthenticationStatus` and `tokenRequestFailed` (iOS spellings).
///
/// Open like ``StatusID``: an app may see strings this version does not name.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    /// `setAuthenticationStatus(1, "")`: no error.
    public static let none = ErrorCode(rawValue: "")
    public static let userNotAuthenticated = ErrorCode(rawValue: "User Not Authenticated Error")
    public static let userNotAuthorized = ErrorCode(rawValue: "User Not Authorized Error")
    public static let providerNotSelected = ErrorCode(rawValue: "Provider Not Selected Error")
    public static let genericAuthentication = ErrorCode(rawValue: "Generic Authentication Error")
    public static let genericAuthorization = ErrorCode(rawValue: "Generic Authorization Error")
}
