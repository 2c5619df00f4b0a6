/// The durable effects of one engine step, in the order the engine produced them: what the fleet
/// hands its sink and the store writes in one transaction.
public struct DeviceStep: Sendable {
    public var device: String
    /// The device's new durable state, when it changed.
    public var snapshot: DeviceSnapshot?
    /// Codes that stopped being polled in this step, and why.
    public var endedCodes: [CodeEnding]
    public var polls: [PollAttempt]
    /// Backend requests other than polls (registration, token, configuration, session, …).
    public var requests: [RequestAttempt]
    public var events: [DeviceEvent]
    /// Wall-clock time of the step, milliseconds since the epoch.
    public var epochMs: Int64

    public init(
        device: String,
        snapshot: DeviceSnapshot? = nil,
        endedCodes: [CodeEnding] = [],
        polls: [PollAttempt] = [],
        requests: [RequestAttempt] = [],
        events: [DeviceEvent] = [],
        epochMs: Int64
    ) {
        self.device = device
        self.snapshot = snapshot
        self.endedCodes = endedCodes
        self.polls = polls
        self.requests = requests
        self.events = events
        self.epochMs = epochMs
    }

    public var isEmpty: Bool { snapshot == nil && polls.isEmpty && requests.isEmpty && events.isEmpty }
}
