/// How one poll ended: the `outcome` column of the poll log.
///
/// A struct rather than a closed enum, like `StatusID`: a log written by another version may hold
/// outcomes this one does not know, and they read back unchanged. The raw value is the stored text.
package struct PollOutcome: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// No one has logged in with the code yet.
    package static let pending = PollOutcome(rawValue: "pending")
    /// The poll answered with a profile: someone logged in with the code.
    package static let authenticated = PollOutcome(rawValue: "authenticated")
    /// HTTP 429.
    package static let throttled = PollOutcome(rawValue: "throttled")
    /// HTTP 5xx.
    package static let serverError = PollOutcome(rawValue: "server-error")
    /// No HTTP answer (connection refused, reset, timed out).
    package static let transportError = PollOutcome(rawValue: "transport-error")
    /// An answer that could not be read.
    package static let malformed = PollOutcome(rawValue: "malformed")
    /// HTTP 401.
    package static let unauthorized = PollOutcome(rawValue: "unauthorized")
    /// The backend no longer knows the code (HTTP 410, or a 400 naming the session or the code).
    package static let codeInvalid = PollOutcome(rawValue: "code-invalid")
    /// Another HTTP 4xx.
    package static let clientError = PollOutcome(rawValue: "client-error")
    /// OAuth device grant (RFC 8628 §3.5): `slow_down`, the client must add 5 s (or the interval named) to this and
    /// every later poll.
    package static let slowDown = PollOutcome(rawValue: "slow-down")
    /// OAuth device grant: the user refused (`access_denied`, or the provider's own code for it).
    package static let denied = PollOutcome(rawValue: "denied")
    /// OAuth device grant: `expired_token`, the device code lapsed before the user finished.
    package static let expired = PollOutcome(rawValue: "expired")
    /// The answer arrived after the loop had stopped (cancel, expiry, new code).
    package static let abandoned = PollOutcome(rawValue: "abandoned")
    /// No answer reached the device: the daemon was stopped (killed) with the poll in flight, and logged it at its
    /// next start.
    package static let interrupted = PollOutcome(rawValue: "interrupted")

    /// Whether the client, not the backend, ended the attempt (`abandoned`, `interrupted`): not an error, and
    /// not the end of the code's polling.
    package var isClientSide: Bool { self == .abandoned || self == .interrupted }

    /// The outcomes this version records, in the order reports list them.
    package static let known: [PollOutcome] = [
        .pending, .authenticated, .throttled, .serverError, .transportError,
        .malformed, .unauthorized, .codeInvalid, .clientError, .slowDown, .denied, .expired, .abandoned, .interrupted,
    ]
}
