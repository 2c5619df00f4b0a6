/// One backend request other than a poll, as it happened: the request log that shows failed
/// onboardings and every 429 and 5xx by stage (polls have their own, richer log).
public struct RequestAttempt: Sendable, Equatable, Codable {
    public var stage: RequestStage
    /// The endpoint's short name (`BackendRequest.name`).
    public var endpoint: String
    public var sentEpochMs: Int64
    public var latencyMs: Double
    public var httpStatus: Int?
    public var outcome: RequestOutcome
    /// Adobe's enhanced or DCR error code, when the answer carried one.
    public var errorCode: String?
    /// The wait before the same request is tried again (`nil`: it is not retried).
    public var retryDelayMs: Int64?

    public init(
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
