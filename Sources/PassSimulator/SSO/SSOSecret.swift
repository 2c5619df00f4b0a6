/// The keys the simulator generates for SSO once and keeps in its state, so tokens and SAML answers it issued stay
/// valid across restarts.
enum SSOSecret: String, Sendable, Hashable, Codable, CaseIterable {
    /// HS256 secret of platform identity tokens (`iss` `pass-sim-platform`).
    case platformHMAC
    /// HMAC-SHA256 secret the emulated MVPD IdP signs SAML assertions with.
    case idpHMAC
    /// RSA private key (PEM) of service tokens.
    case serviceRSA
}
