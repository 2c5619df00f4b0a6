/// What a device's app tells the backend about itself beyond its device id: values Adobe checks
/// against the requestor's registration, so a fleet can match a real integration.
public struct ClientIdentity: Sendable, Equatable, Codable {
    /// v2 sessions `domainName`: a domain registered for the requestor.
    public var domainName: String = "adobe.com"
    /// v2 sessions and logout `redirectUrl`: where the second-screen browser lands after the MVPD login.
    public var redirectURL: String = "https://adobe.com"
    /// DCR `redirect_uri` sent with the software statement.
    public var clientRedirectURI: String = "adobepass://ios.app"
    /// `User-Agent` of every call; the backend derives part of its device model from it.
    public var userAgent: String = "AppleTV11,1 tvOS/17.0 AccessEnabler/3.7.1 regcoded"
    /// Whether calls carry the device's emulated client address as `X-Forwarded-For`, so a backend that
    /// throttles per client address sees each device as its own box. Off for integrations where the
    /// backend would not honour the header: then every device shares the host's address.
    public var sendsForwardedFor: Bool = true

    public init() {}

    private enum CodingKeys: String, CodingKey {
        case domainName, redirectURL, clientRedirectURI, userAgent, sendsForwardedFor
    }

    /// Reads a stored identity; a key an older version did not write keeps its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var identity = ClientIdentity()
        identity.domainName = try c.decodeIfPresent(String.self, forKey: .domainName) ?? identity.domainName
        identity.redirectURL = try c.decodeIfPresent(String.self, forKey: .redirectURL) ?? identity.redirectURL
        identity.clientRedirectURI = try c.decodeIfPresent(String.self, forKey: .clientRedirectURI) ?? identity.clientRedirectURI
        identity.userAgent = try c.decodeIfPresent(String.self, forKey: .userAgent) ?? identity.userAgent
        identity.sendsForwardedFor = try c.decodeIfPresent(Bool.self, forKey: .sendsForwardedFor) ?? identity.sendsForwardedFor
        self = identity
    }
}
