/// An authentication request handed to a partner (`authenticationRequest` of `sessions/sso/Apple`), open until the
/// matching SAML answer is exchanged for a profile or it expires (one code TTL).
struct PartnerRequest: Sendable, Equatable, Codable {
    /// The SAML request's `ID`, echoed as the answer's `InResponseTo`.
    let id: String
    let sessionId: String
    let serviceProvider: String
    let mvpd: String
    let deviceIdentifier: String
    let clientId: String
    let notBefore: Int64
    let notAfter: Int64
    /// Set once a SAML answer to it created a profile: an answer is good for one exchange.
    var consumed: Bool = false
}
