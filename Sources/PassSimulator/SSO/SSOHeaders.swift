import Hummingbird

extension HTTPFields.Element.Name {
    /// Platform identity (Amazon and others).
    static let adobeSubjectToken = Self("Adobe-Subject-Token")!
    /// Platform identity as RokuOS appends it.
    static let rokuConnectToken = Self("X-Roku-Reserved-Roku-Connect-Token")!
    /// Service token.
    static let adServiceToken = Self("AD-Service-Token")!
    /// Apple partner framework status.
    static let partnerFrameworkStatus = Self("AP-Partner-Framework-Status")!
}

extension V2Routes {
    /// The SSO subjects of the request's valid `Adobe-Subject-Token` (else `X-Roku-Reserved-Roku-Connect-Token`) and
    /// `AD-Service-Token` headers, platform first. A missing or invalid header is ignored: the request is served
    /// without SSO, never answered with an error (sso.md §2.2).
    ///
    /// A token of the SSO Service counts only from a device enrolled under its common identifier: unlinking removes a
    /// device "from the Single Sign On" (SSO-SVC step 6), whatever token it still holds.
    func ssoSubjects(_ request: Request) async -> [SSOSubject] {
        var subjects: [SSOSubject] = []
        if let token = request.headers[.adobeSubjectToken] ?? request.headers[.rokuConnectToken],
            let subject = self.state.withLock({ $0.verifySSOToken(token.trimmed, method: .platform) })
        {
            subjects.append(subject)
        }
        let device = (try? Self.deviceIdentifier(request, required: false)) ?? nil
        if let token = request.headers[.adServiceToken],
            let subject = self.state.withLock({ state -> SSOSubject? in
                guard let subject = state.verifySSOToken(token.trimmed, method: .serviceToken) else { return nil }
                guard subject.issuer == SimulatorState.ssoServiceIssuer, state.configuration.identityIssuers[subject.issuer] == nil else {
                    return subject
                }
                guard let device, state.ssoServiceDeviceIsEnrolled(device, commonId: subject.subject) else { return nil }
                return subject
            })
        {
            subjects.append(subject)
        }
        return subjects
    }

    /// The decoded `AP-Partner-Framework-Status`; `nil` when missing or not Base64 JSON.
    static func partnerFrameworkStatus(_ request: Request) -> PartnerFrameworkStatus? {
        request.headers[.partnerFrameworkStatus].flatMap { PartnerFrameworkStatus(headerValue: $0.trimmed) }
    }

    /// Why the request's PFS header does not allow partner SSO for `mvpd` (sso.md §3.3 mapping), or `nil`.
    func pfsProblem(_ request: Request, mvpd: String?) async -> PFSProblem? {
        let status = Self.partnerFrameworkStatus(request)
        let state = self.state
        var enforce = true
        if let mvpd, let platform = state.withLock({ $0.platform(ofMVPD: mvpd) }) { enforce = platform.enforcePlatformPermissions }
        let mapping = Dictionary(
            state.withLock { $0.mvpdsInForce() }.compactMap { mvpd in mvpd.platformMappingId.map { ($0, mvpd.id) } },
            uniquingKeysWith: { first, _ in first }
        )
        return PartnerFrameworkStatus.problem(
            status,
            mvpd: mvpd,
            enforcePermissions: enforce,
            mvpdForProvider: { mapping[$0] },
            now: self.configuration.clock.nowMillis
        )
    }

    /// The MVPD the request's PFS provider maps to (the MVPD whose `platformMappingId` is `frameworkProviderInfo.id`):
    /// the MVPD of a partner request, which carries none in its body (`[API-SSOREQ]`). `nil` without a mappable provider.
    func pfsMVPD(_ request: Request) -> String? {
        guard let provider = Self.partnerFrameworkStatus(request)?.frameworkProviderInfo?.id else { return nil }
        return self.state.withLock { $0.mvpdsInForce() }.first { $0.platformMappingId == provider }?.id
    }
}
