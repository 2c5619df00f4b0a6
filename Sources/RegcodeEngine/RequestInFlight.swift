import RegcodeRecords

/// A backend request as it goes out. The fleet stores it before the request is sent and removes it with the
/// answer's records, in one transaction: a kill in between leaves it behind, and the next start logs it as
/// `interrupted`. Every request the backend may have answered is then either answered in the database or known
/// to have been cut off; the backend's answer to it never reached the device, so nothing was built on it.
package struct RequestInFlight: Sendable, Equatable {
    /// The record's number, given by the fleet as it stores it (the engine leaves 0): increasing over the process, so
    /// records are added at the end of their table and leave from its front, and the answer's step names the one it
    /// settles.
    package var id: UInt64
    package var stage: RequestStage
    /// The endpoint's short name (``BackendRequest/name``).
    package var endpoint: String
    package var sentEpochMs: Int64
    /// The polled code (stage `poll` only).
    package var pollCode: String?
    /// When the poll was planned (stage `poll` only).
    package var plannedEpochMs: Int64?

    package init(
        id: UInt64 = 0,
        stage: RequestStage,
        endpoint: String,
        sentEpochMs: Int64,
        pollCode: String? = nil,
        plannedEpochMs: Int64? = nil
    ) {
        self.id = id
        self.stage = stage
        self.endpoint = endpoint
        self.sentEpochMs = sentEpochMs
        self.pollCode = pollCode
        self.plannedEpochMs = plannedEpochMs
    }
}
