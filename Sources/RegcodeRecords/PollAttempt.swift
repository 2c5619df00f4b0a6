/// One poll as it happened, for the poll log.
package struct PollAttempt: Sendable, Equatable, Codable {
    package var code: String
    package var plannedEpochMs: Int64
    package var sentEpochMs: Int64
    package var latencyMs: Double
    package var httpStatus: Int?
    package var outcome: PollOutcome
    /// The wait chosen after this attempt (`nil` when polling stopped).
    package var nextDelayMs: Int64?

    package init(
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
