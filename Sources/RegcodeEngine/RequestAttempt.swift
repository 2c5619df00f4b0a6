/// Which stage of a device's life a backend request served; the request log and the soak report
/// count throttling and failures by it.
public enum RequestStage: String, Sendable, Codable, CaseIterable {
    /// DCR `POST /o/client/register`.
    case registration
    /// DCR `POST /o/client/token`.
    case token
    /// `setRequestor`: the requestor's configuration (MVPD list).
    case configuration
    /// A new code: v2 `POST sessions`, v1 `POST regcode` (and v1's `checkauthn` before it).
    case session
    /// The profile the backend already holds (v2 `profiles/{mvpd}`, v1 `tokens/authn` outside a poll).
    case profile
    /// Polling a pending code (kept in the poll log, not the request log).
    case poll
    /// Authorization and preauthorization decisions, media tokens.
    case decision
    /// `getMetadata`.
    case metadata
    case logout
}

/// How one backend request other than a poll ended.
public enum RequestOutcome: String, Sendable, Codable, CaseIterable {
    case ok
    case throttled
    case serverError = "server-error"
    case transportError = "transport-error"
    case malformed
    case unauthorized
    case clientError = "client-error"
    /// The answer arrived after the device had stopped waiting for it (shutdown, removal).
    case abandoned
}

/// One backend request other than a poll, as it happened: the request log that shows failed
/// onboardings and every 429 and 5xx by stage (polls have their own, richer log).
public struct RequestAttempt: Sendable, Equatable, Codable {
    public var stage: RequestStage
    /// The endpoint's short name (``BackendRequest/name``).
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
