import RegcodeRecords

// How the report reads the logged outcomes and stages: the order it lists them in, which count as
// errors, and which are followed by a backoff.

extension SoakReport {
    /// Poll outcomes after which the engine waits a backoff delay rather than the interval.
    ///
    /// `client-error` belongs here too: the engine counts it as a consecutive error like a 5xx. The OAuth device grant's
    /// `slow-down` does not (it sets a longer interval, which the next poll's `planned_at` holds), and `denied` and
    /// `expired` end the code.
    package static let backoffOutcomes: Set<PollOutcome> = [.serverError, .transportError, .malformed, .unauthorized, .clientError]

    /// The engine's request stages other than polling, in the order reports list them.
    package static let stageKinds = RequestStage.known.filter { $0 != .poll }

    /// The engine's request outcomes, in the order reports list them.
    package static let requestOutcomeKinds = RequestOutcome.known

    /// The engine's poll outcomes, in the order reports list them.
    package static let outcomeKinds = PollOutcome.known

    /// Poll outcomes counted as errors in the trouble figures; `abandoned`, `interrupted` and `code-invalid` are the
    /// client's or the code's doing, not the backend's, and the OAuth device grant's `slow-down`, `denied` and
    /// `expired` are answers the protocol defines (the device flow figures count them).
    package static let errorPollOutcomes: Set<PollOutcome> = [
        .throttled, .serverError, .transportError, .malformed, .unauthorized, .clientError,
    ]

    /// Request outcomes counted as errors in the trouble figures; `abandoned` and `interrupted` are the client's doing.
    package static let errorRequestOutcomes: Set<RequestOutcome> = [
        .throttled, .serverError, .transportError, .malformed, .unauthorized, .clientError,
    ]
}

extension StageFigures {
    /// Counts one request's outcome in its column: `ok`, 429, 5xx, transport, 4xx (`client-error` and
    /// `unauthorized`), or other (`malformed`, `abandoned`, `interrupted`, and outcomes this build does not know).
    mutating func count(_ outcome: RequestOutcome) {
        outcomes[outcome, default: 0] += 1
        switch outcome {
        case .ok: ok += 1
        case .throttled: throttled += 1
        case .serverError: serverErrors += 1
        case .transportError: transportErrors += 1
        case .clientError, .unauthorized: clientErrors += 1
        default: other += 1
        }
    }
}
