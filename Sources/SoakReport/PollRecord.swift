import RegcodeRecords

/// One poll attempt as the report reads it from the poll log.
public struct PollRecord: Sendable, Equatable {
    public var device: String
    public var code: String
    /// Milliseconds since the Unix epoch.
    public var plannedMs: Int64
    public var sentMs: Int64
    public var latencyMs: Double
    public var httpStatus: Int?
    /// How the poll ended; outcomes of other versions are kept as they were logged.
    public var outcome: PollOutcome
    public var nextDelayMs: Int64?

    public init(
        device: String,
        code: String,
        plannedMs: Int64,
        sentMs: Int64,
        latencyMs: Double,
        httpStatus: Int?,
        outcome: PollOutcome,
        nextDelayMs: Int64?
    ) {
        self.device = device
        self.code = code
        self.plannedMs = plannedMs
        self.sentMs = sentMs
        self.latencyMs = latencyMs
        self.httpStatus = httpStatus
        self.outcome = outcome
        self.nextDelayMs = nextDelayMs
    }
}
