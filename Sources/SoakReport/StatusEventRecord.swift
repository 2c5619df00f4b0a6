import AccessEnablerAPI

/// A `status` callback as the report reads it from the event log.
///
/// Only `REG410` (the code expired) and `REG500` (no code, or polling given up) are counted;
/// other error ids are accepted and ignored.
public struct StatusEventRecord: Sendable, Equatable {
    public var device: String
    /// Milliseconds since the Unix epoch.
    public var timeMs: Int64
    /// `statusDictionary.errorId`, e.g. `REG410`.
    public var errorId: String
    /// `statusDictionary.code`: the code an expiry names, when the event carries one.
    public var code: String?

    public init(device: String, timeMs: Int64, errorId: String, code: String?) {
        self.device = device
        self.timeMs = timeMs
        self.errorId = errorId
        self.code = code
    }

    /// The error id of a code expiry.
    public static let expired = StatusID.registrationCodeExpired.rawValue
    /// The error id of a failure to get a code or of polling given up.
    public static let failed = StatusID.registrationCodeFailed.rawValue
}
