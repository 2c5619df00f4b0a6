/// One poll as it happened, for the poll log.
public struct PollAttempt: Sendable, Equatable, Codable {
    public var code: String
    public var plannedEpochMs: Int64
    public var sentEpochMs: Int64
    public var latencyMs: Double
    public var httpStatus: Int?
    public var outcome: PollOutcome
    /// The wait chosen after this attempt (`nil` when polling stopped).
    public var nextDelayMs: Int64?

    public init(
        code: String,
        plannedEpochMs: Int64,
        sentEpochMs: Int64,
        latencyMs: Double,
        httpStatus: Int?,
        outcome: PollOutcome,
        nextDelayMs: Int64?
    ) {
        self.code = code
        self.plannedEpochMs = plannedEpochMs
        self.sentEpochMs = sentEpochMs
        self.latencyMs = latencyMs
        self.httpStatus = httpStatus
        self.outcome = outcome
        self.nextDelayMs = nextDelayMs
    }
}
