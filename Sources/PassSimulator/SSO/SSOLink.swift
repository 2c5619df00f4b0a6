/// One MVPD an SSO subject authenticated with: the regular profile the linking login created, whose validity window
/// every app reaching it through the subject shares (Roku: "the second application will share the TTL of the first").
struct SSOLink: Sendable, Equatable, Codable {
    /// The service provider whose login created the link.
    let serviceProvider: String
    /// The device and client of that login: where the source profile is stored, so a single logout can drop it too.
    let deviceIdentifier: String
    let clientId: String
    /// The source profile (its `notBefore`/`notAfter` and attributes are copied into SSO profiles).
    let profile: SimulatedProfile
}
