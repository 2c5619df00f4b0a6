/// One entry of a device log (polls, other requests): the attempt as the engine recorded it and the device that made
/// it. The store reads its rows as these and the report computes from them, so a field has one name everywhere.
@dynamicMemberLookup
package struct DeviceLogEntry<Attempt: Sendable & Equatable>: Sendable, Equatable {
    package var device: String
    package var attempt: Attempt

    package init(device: String, attempt: Attempt) {
        self.device = device
        self.attempt = attempt
    }

    /// A field of the attempt, as a member of the entry (`entry.sentEpochMs`).
    package subscript<Value>(dynamicMember field: WritableKeyPath<Attempt, Value>) -> Value {
        get { attempt[keyPath: field] }
        set { attempt[keyPath: field] = newValue }
    }
}

/// A logged poll.
package typealias PollLogEntry = DeviceLogEntry<PollAttempt>
/// A logged request other than a poll.
package typealias RequestLogEntry = DeviceLogEntry<RequestAttempt>
