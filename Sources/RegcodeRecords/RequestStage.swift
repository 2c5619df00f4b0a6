/// Which stage of a device's life a backend request served: the `stage` column of the request log.
/// The request log and the soak report count throttling and failures by it.
///
/// A struct rather than a closed enum, like `StatusID`: a log written by another version may hold
/// stages this one does not know, and they read back unchanged. The raw value is the stored text.
public struct RequestStage: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// DCR `POST /o/client/register`.
    public static let registration = RequestStage(rawValue: "registration")
    /// DCR `POST /o/client/token`.
    public static let token = RequestStage(rawValue: "token")
    /// `setRequestor`: the requestor's configuration (MVPD list).
    public static let configuration = RequestStage(rawValue: "configuration")
    /// A new code: v2 `POST sessions`, v1 `POST regcode` (and v1's `checkauthn` before it).
    public static let session = RequestStage(rawValue: "session")
    /// The profile the backend already holds (v2 `profiles/{mvpd}`, v1 `tokens/authn` outside a poll).
    public static let profile = RequestStage(rawValue: "profile")
    /// Polling a pending code (kept in the poll log, not the request log).
    public static let poll = RequestStage(rawValue: "poll")
    /// Authorization and preauthorization decisions, media tokens.
    public static let decision = RequestStage(rawValue: "decision")
    /// `getMetadata`.
    public static let metadata = RequestStage(rawValue: "metadata")
    /// `logout`.
    public static let logout = RequestStage(rawValue: "logout")

    /// The stages this version records, in the order reports list them.
    public static let known: [RequestStage] = [
        .registration, .token, .configuration, .session, .profile, .poll, .decision, .metadata, .logout,
    ]
}
