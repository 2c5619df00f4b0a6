/// Which stage of a device's life a backend request served: the `stage` column of the request log.
/// The request log and the soak report count throttling and failures by it.
///
/// A struct rather than a closed enum, like `StatusID`: a log written by another version may hold
/// stages this one does not know, and they read back unchanged. The raw value is the stored text.
package struct RequestStage: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// DCR `POST /o/client/register`.
    package static let registration = RequestStage(rawValue: "registration")
    /// DCR `POST /o/client/token`; an OAuth device's refresh (RFC 6749 §6).
    package static let token = RequestStage(rawValue: "token")
    /// `setRequestor`: the requestor's configuration (MVPD list); an OAuth device's discovery document.
    package static let configuration = RequestStage(rawValue: "configuration")
    /// A new code: v2 `POST sessions`, v1 `POST regcode` (and v1's `checkauthn` before it), an OAuth device
    /// authorization request (RFC 8628 §3.1).
    package static let session = RequestStage(rawValue: "session")
    /// The profile the backend already holds (v2 `profiles/{mvpd}`, v1 `tokens/authn` outside a poll).
    package static let profile = RequestStage(rawValue: "profile")
    /// Polling a pending code (kept in the poll log, not the request log).
    package static let poll = RequestStage(rawValue: "poll")
    /// Authorization and preauthorization decisions, media tokens.
    package static let decision = RequestStage(rawValue: "decision")
    /// `getMetadata`; an OAuth device's use of its access token (userinfo, introspection).
    package static let metadata = RequestStage(rawValue: "metadata")
    /// `logout`; an OAuth device's token revocation (RFC 7009).
    package static let logout = RequestStage(rawValue: "logout")

    /// The stages this version records, in the order reports list them.
    package static let known: [RequestStage] = [
        .registration, .token, .configuration, .session, .profile, .poll, .decision, .metadata, .logout,
    ]
}
