/// How one backend request other than a poll ended: the `outcome` column of the request log.
///
/// A struct rather than a closed enum, like `StatusID`: a log written by another version may hold
/// outcomes this one does not know, and they read back unchanged. The raw value is the stored text.
package struct RequestOutcome: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// The request succeeded.
    package static let ok = RequestOutcome(rawValue: "ok")
    /// HTTP 429.
    package static let throttled = RequestOutcome(rawValue: "throttled")
    /// HTTP 5xx.
    package static let serverError = RequestOutcome(rawValue: "server-error")
    /// No HTTP answer (connection refused, reset, timed out).
    package static let transportError = RequestOutcome(rawValue: "transport-error")
    /// An answer that could not be read.
    package static let malformed = RequestOutcome(rawValue: "malformed")
    /// HTTP 401.
    package static let unauthorized = RequestOutcome(rawValue: "unauthorized")
    /// Another HTTP 4xx.
    package static let clientError = RequestOutcome(rawValue: "client-error")
    /// The answer arrived after the device had stopped waiting for it (shutdown, removal).
    package static let abandoned = RequestOutcome(rawValue: "abandoned")
    /// No answer reached the device: the daemon was stopped (killed) with the request in flight, and logged it at
    /// its next start.
    package static let interrupted = RequestOutcome(rawValue: "interrupted")

    /// Whether the client, not the backend, ended the attempt (`abandoned`, `interrupted`).
    package var isClientSide: Bool { self == .abandoned || self == .interrupted }

    /// The outcomes this version records, in the order reports list them.
    package static let known: [RequestOutcome] = [
        .ok, .throttled, .serverError, .transportError, .malformed, .unauthorized, .clientError, .abandoned, .interrupted,
    ]
}
