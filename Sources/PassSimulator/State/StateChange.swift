/// One durable record written (a value) or deleted (`nil`), as the state journal hands it to the state file.
enum StateChange: Sendable {
    case client(String, RegisteredClient?)
    case accessToken(String, AccessTokenGrant?)
    case session(String, AuthenticationSession?)
    case profiles(SimulatorState.ProfileKey, [String: SimulatedProfile]?)
    case v1Token(SimulatorState.DeviceKey, SimulatedProfile?)
    case v1Authorizations(SimulatorState.DeviceKey, [String: AuthorizationGrant]?)
    case denyLists(DenyLists)
    case ssoLinks(SSOSubject, [String: SSOLink]?)
    case partnerRequest(String, PartnerRequest?)
    case ssoSecret(SSOSecret, String?)
    case mvpdPlatform(String, MVPDPlatform?)
    case integration(IntegrationKey, IntegrationSettings?)
    case ssoServiceDevices(String, [String: SSOServiceDevice]?)
    case ssoServiceLinkCode(String, SSOServiceLinkCode?)
}
