import RegcodeRecords

/// One backend request other than a poll, as the report reads it from the request log.
public struct RequestRecord: Sendable, Equatable {
    public var device: String
    /// The stage the request served; stages of other versions are kept as they were logged.
    public var stage: RequestStage
    /// The endpoint's short name.
    public var endpoint: String
    /// Milliseconds since the Unix epoch.
    public var sentMs: Int64
    public var latencyMs: Double
    public var httpStatus: Int?
    /// How the request ended; outcomes of other versions are kept as they were logged.
    public var outcome: RequestOutcome
    /// Adobe's enhanced or DCR error code, when the answer carried one.
    public var errorCode: String?
    /// The wait before the same request was tried again (`nil`: it was not retried).
    public var retryDelayMs: Int64?

    public init(
        device: String,
        stage: RequestStage,
        endpoint: String,
        sentMs: Int64,
        latencyMs: Double,
        httpStatus: Int?,
        outcome: RequestOutcome,
        errorCode: String? = nil,
        retryDelayMs: Int64? = nil
    ) {
        self.device = device
        self.stage = stage
        self.endpoint = endpoint
        self.sentMs = sentMs
        self.latencyMs = latencyMs
        self.httpStatus = httpStatus
        self.outcome = outcome
        self.errorCode = errorCode
        self.retryDelayMs = retryDelayMs
    }
}

/// A device as the report reads it from the `devices` table: present devices appear in the report
/// even without any logged activity, and codes issued before the report's window still count.
public struct DeviceRecord: Sendable, Equatable {
    public var device: String
    /// The engine's `DevicePhase` raw value (`polling`, `authenticated`, `failed`, …).
    public var state: String?
    /// Codes the device was ever issued, as far as the state database remembers.
    public var codesIssued: Int
    /// `devices.fleet`: the configured fleet the device belongs to.
    public var fleet: String?

    public init(device: String, state: String?, codesIssued: Int, fleet: String? = nil) {
        self.device = device
        self.state = state
        self.codesIssued = codesIssued
        self.fleet = fleet
    }
}
