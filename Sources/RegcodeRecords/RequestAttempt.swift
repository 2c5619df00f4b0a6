/// One backend request other than a poll, as it happened: the request log that shows failed
/// onboardings and every 429 and 5xx by stage (polls have their own, richer log).
package struct RequestAttempt: Sendable, Equatable, Codable {
    package var stage: RequestStage
    /// The endpoint's short name (`BackendRequest.name`).
    package var endpoint: String
    package var sentEpochMs: Int64
    package var latencyMs: Double
    package var httpStatus: Int?
    package var outcome: RequestOutcome
    /// Adobe's enhanced or DCR error code, when the answer carried one.
    package var errorCode: String?
    /// The wait before the same request is tried again (`nil`: it is not retried).
    package var retryDelayMs: Int64?

    package init(
        stage: RequestStage,
        endpoint: String,
        sentEpochMs: Int64,
        latencyMs: Double,
        httpStatus: Int?,
        outcome: RequestOutcome,
        errorCode: String? = nil,
        retryDelayMs: Int64? = nil
    ) {
        self.stage = stage
        self.endpoint = endpoint
        self.sentEpochMs = sentEpochMs
        self.latencyMs = latencyMs
        self.httpStatus = httpStatus
        self.outcome = outcome
        self.errorCode = errorCode
        self.retryDelayMs = retryDelayMs
    }
}
