import RegcodeRecords

/// The durable effects of one engine step, in the order the engine produced them: what the fleet
/// hands its sink and the store writes in one transaction.
package struct DeviceStep: Sendable {
    package var device: String
    /// The app (AccessEnabler instance) of the device the step is for.
    package var app: String
    /// Whether that app is the device's first: its state lives in the device's own row.
    package var isFirstApp: Bool
    /// The device's whole shared token storage, when this step changed it.
    package var tokens: [SharedToken]?
    /// The device's new durable state, when it changed.
    package var snapshot: DeviceSnapshot?
    /// Codes that stopped being polled in this step, and why.
    package var endedCodes: [CodeEnding]
    package var polls: [PollAttempt]
    /// Backend requests other than polls (registration, token, configuration, session, …).
    package var requests: [RequestAttempt]
    package var events: [DeviceEvent]
    /// The request the app sends after this step, stored before it goes out.
    package var sentRequest: RequestInFlight?
    /// The ``RequestInFlight/id`` of the request answered in this step: its record is removed with the answer's.
    package var answeredRequest: UInt64?
    /// Wall-clock time of the step, milliseconds since the epoch.
    package var epochMs: Int64

    package init(
        device: String,
        app: String = DeviceStep.defaultApp,
        isFirstApp: Bool = true,
        snapshot: DeviceSnapshot? = nil,
        endedCodes: [CodeEnding] = [],
        polls: [PollAttempt] = [],
        requests: [RequestAttempt] = [],
        events: [DeviceEvent] = [],
        epochMs: Int64
    ) {
        self.device = device
        self.app = app
        self.isFirstApp = isFirstApp
        self.tokens = nil
        self.snapshot = snapshot
        self.endedCodes = endedCodes
        self.polls = polls
        self.requests = requests
        self.events = events
        self.epochMs = epochMs
    }

    package var isEmpty: Bool {
        snapshot == nil && tokens == nil && polls.isEmpty && requests.isEmpty && events.isEmpty && sentRequest == nil && answeredRequest == nil
    }

    /// The id of a device's app when none is configured.
    package static let defaultApp = "main"
}
