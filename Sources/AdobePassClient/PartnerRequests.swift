import Foundation
import RegcodeEngine

/// Apple single sign-on calls: the REST v2 partner endpoints and the MVPD identity provider the TV
/// Provider framework talks to (sso.md §2.4, cookbook phase C).
enum PartnerRequests {
    /// `POST /api/v2/{sp}/sessions/sso/Apple` with `mvpd`, `domainName` and `redirectUrl` (the last two are
    /// used only when the backend falls back to the code flow).
    static func session(mvpd: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let form = [("mvpd", mvpd), ("domainName", context.identity.domainName), ("redirectUrl", context.identity.redirectURL)]
        var headers = V2Requests.headers(context: context, configuration: configuration)
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return HTTPCall(
            method: .post,
            path: V2Requests.base(context) + "/sessions/sso/Apple",
            headers: headers,
            body: Data(FormEncoding.encode(form).utf8)
        )
    }

    /// `POST /api/v2/{sp}/profiles/sso/Apple` with the SAML response: the cookbook strips whitespace
    /// before form-encoding it once (double encoding is the documented mistake).
    static func profile(samlResponse: String, mvpd: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let compact = samlResponse.filter { !$0.isWhitespace }
        var headers = V2Requests.headers(context: context, configuration: configuration)
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return HTTPCall(
            method: .post,
            path: V2Requests.base(context) + "/profiles/sso/Apple",
            headers: headers,
            body: Data(FormEncoding.encode([("SAMLResponse", compact), ("mvpd", mvpd)]).utf8)
        )
    }

    /// The TV Provider's attribute query to the MVPD's identity provider. Against pass-sim that is its
    /// emulated IdP; a real MVPD is reached by Apple's framework, never by an app, so a lab pointing at
    /// a real backend has no Apple single sign-on to emulate.
    static func identityProvider(request: String, provider: String, user: TVProviderUser, context: RequestContext) -> HTTPCall {
        var userObject: [String: String] = ["userID": user.userID]
        if let household = user.householdID { userObject["householdID"] = household }
        if let zip = user.zip { userObject["zip"] = zip }
        let body: [String: AnyEncodable] = [
            "authenticationRequest": AnyEncodable(request), "provider": AnyEncodable(provider), "user": AnyEncodable(userObject),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return HTTPCall(
            method: .post,
            path: "/_sim/partner/Apple/authn-response",
            headers: [("Content-Type", "application/json"), ("Accept", "application/json"), ("User-Agent", context.identity.userAgent)],
            body: try? encoder.encode(body)
        )
    }
}

/// Lets one JSON object mix value types without a model type per call.
struct AnyEncodable: Encodable {
    private let encodeValue: (any Encoder) throws -> Void
    init<T: Encodable>(_ value: T) { encodeValue = value.encode(to:) }
    func encode(to encoder: any Encoder) throws { try encodeValue(encoder) }
}
