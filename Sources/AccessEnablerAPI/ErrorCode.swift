/// The error strings of `setAuthenticationStatus` and `tokenRequestFailed` (iOS spellings).
///
/// Open like ``StatusID``: an app may see strings this version does not name.
package struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        self.rawValue = value
    }

    package var description: String { rawValue }

    /// `setAuthenticationStatus(1, "")`: no error.
    package static let none = ErrorCode(rawValue: "")
    package static let userNotAuthenticated = ErrorCode(rawValue: "User Not Authenticated Error")
    package static let userNotAuthorized = ErrorCode(rawValue: "User Not Authorized Error")
    package static let providerNotSelected = ErrorCode(rawValue: "Provider Not Selected Error")
    package static let genericAuthentication = ErrorCode(rawValue: "Generic Authentication Error")
    package static let genericAuthorization = ErrorCode(rawValue: "Generic Authorization Error")
}
