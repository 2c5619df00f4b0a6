/// The SSO state as `GET /_sim/sso` reports it: profiles by type, subject links, open partner requests.
struct SSOSnapshot: Sendable, Encodable {
    struct Profile: Sendable, Encodable {
        let serviceProvider: String
        let deviceIdentifier: String
        /// Empty with the `device` profile scope.
        let clientId: String
        let mvpd: String
        let type: ProfileType
        let issuer: String
        let userId: String
        let notBefore: Int64
        let notAfter: Int64
    }

    struct Link: Sendable, Encodable {
        let method: SSOMethod
        let issuer: String
        let subject: String
        let mvpd: String
        /// The service provider whose login created the link.
        let serviceProvider: String
        let userId: String
        let notBefore: Int64
        let notAfter: Int64
    }

    struct Request: Sendable, Encodable {
        let id: String
        let serviceProvider: String
        let mvpd: String
        let deviceIdentifier: String
        let clientId: String
        let notBefore: Int64
        let notAfter: Int64

        init(_ request: PartnerRequest) {
            self.id = request.id
            self.serviceProvider = request.serviceProvider
            self.mvpd = request.mvpd
            self.deviceIdentifier = request.deviceIdentifier
            self.clientId = request.clientId
            self.notBefore = request.notBefore
            self.notAfter = request.notAfter
        }
    }

    /// Stored profiles (`regular`, `appleSSO`, `degraded`, …) by type; SSO profiles reached through links are derived
    /// per request and listed as ``links``.
    let profiles: [String: [Profile]]
    let links: [Link]
    let partnerRequests: [Request]
}
