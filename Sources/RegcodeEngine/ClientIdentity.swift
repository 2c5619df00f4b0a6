/// What a device's app tells the backend about itself beyond its device id: values Adobe checks
/// against the requestor's registration, so a fleet can match a real integration.
package struct ClientIdentity: Sendable, Equatable, Codable {
    /// v2 sessions `domainName`: a domain registered for the requestor.
    package var domainName: String = "adobe.com"
    /// v2 sessions and logout `redirectUrl`: where the second-screen browser lands after the MVPD login.
    package var redirectURL: String = "https://adobe.com"
    /// DCR `redirect_uri` sent with the software statement.
    package var clientRedirectURI: String = "adobepass://ios.app"
    /// `User-Agent` of every call; the backend derives part of its device model from it. nil: the persona's
    /// (``PersonaRules/defaultUserAgent``), filled in by the engine before a call leaves.
    package var userAgent: String? = nil

    /// The AccessEnabler SDK's `User-Agent` on an Apple TV.
    package static let sdkUserAgent = "AppleTV11,1 tvOS/17.0 AccessEnabler/3.7.1 regcoded"

    package init() {}

    private enum CodingKeys: String, CodingKey {
        case domainName, redirectURL, clientRedirectURI, userAgent
    }

    /// Reads a stored identity; a key an older version did not write keeps its default.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var identity = ClientIdentity()
        identity.domainName = try c.decodeIfPresent(String.self, forKey: .domainName) ?? identity.domainName
        identity.redirectURL = try c.decodeIfPresent(String.self, forKey: .redirectURL) ?? identity.redirectURL
        identity.clientRedirectURI = try c.decodeIfPresent(String.self, forKey: .clientRedirectURI) ?? identity.clientRedirectURI
        identity.userAgent = try c.decodeIfPresent(String.self, forKey: .userAgent)
        self = identity
    }
}
