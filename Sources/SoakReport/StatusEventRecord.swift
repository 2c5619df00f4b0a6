import AccessEnablerAPI

/// A `status` callback as the report reads it from the event log.
///
/// `REG410` (the code expired) and `REG500` (no code, or polling given up) are counted as such;
/// `REGCODE` counts the codes a device was issued; any failure (see ``isFailure``) can be the
/// reason a device never got a code. Other ids are accepted and otherwise ignored.
package struct StatusEventRecord: Sendable, Equatable {
    package var device: String
    /// Milliseconds since the Unix epoch.
    package var timeMs: Int64
    /// `statusDictionary.errorId`, e.g. `REG410`.
    package var errorId: String
    /// `statusDictionary.code`: the code an expiry names, when the event carries one.
    package var code: String?
    /// `statusDictionary.message`.
    package var message: String?
    /// `statusDictionary.level` (`success`, `info`, `warning`, `error`), when known.
    package var level: String?

    package init(device: String, timeMs: Int64, errorId: String, code: String?, message: String? = nil, level: String? = nil) {
        self.device = device
        self.timeMs = timeMs
        self.errorId = errorId
        self.code = code
        self.message = message
        self.level = level
    }

    /// Whether the status reports a failure: level `error` or `warning`; without a level, any id
    /// but `REGCODE`. `N010` and `Z010` are warnings about a success (logged in, authorized under
    /// degradation), not failures.
    package var isFailure: Bool {
        if Self.degradedSuccess.contains(errorId) { return false }
        return switch level {
        case "error", "warning": true
        case nil: errorId != Self.registrationCode
        default: false
        }
    }

    /// The error id of a code expiry.
    package static let expired = StatusID.registrationCodeExpired.rawValue
    /// The error id of a failure to get a code or of polling given up.
    package static let failed = StatusID.registrationCodeFailed.rawValue
    /// The ids of a login and an authorization that succeeded under degradation (warnings).
    package static let degradedSuccess: Set<String> = [StatusID.authenticatedDegraded.rawValue, StatusID.authorizedDegraded.rawValue]
    /// The error id of a new code to show.
    package static let registrationCode = StatusID.registrationCode.rawValue
}
