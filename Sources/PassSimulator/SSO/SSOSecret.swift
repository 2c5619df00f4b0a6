/// The keys the simulator generates for SSO once and keeps in its state, so tokens it issued stay valid across
/// restarts. (A state file's older `idpHMAC` row, from when pass-sim signed SAML answers itself, is skipped.)
enum SSOSecret: String, Sendable, Hashable, Codable, CaseIterable {
    /// HS256 secret of platform identity tokens (`iss` `pass-sim-platform`).
    case platformHMAC
    /// RSA private key (PEM) of service tokens.
    case serviceRSA
    /// HS256 secret of the SSO Service's tokens (`iss` `ssoservicetoken`).
    case ssoServiceHMAC
}
