import Foundation
import RegcodeEngine

/// Apple single sign-on calls: the REST v2 partner endpoints (sso.md §2.4, cookbook phase C). The MVPD is never in
/// the body: Adobe takes it from `AP-Partner-Framework-Status` (the provider's `platformMappingId`), and the OAS lists
/// only `domainName`, `redirectUrl` and `SAMLResponse` (`[API-SSOREQ]`, `[API-SSOPROF]`).
enum PartnerRequests {
    /// `POST /api/v2/{sp}/sessions/sso/Apple` with `domainName` and `redirectUrl` (used only when the backend falls
    /// back to the code flow).
    static func session(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let form = [("domainName", context.identity.domainName), ("redirectUrl", context.identity.redirectURL)]
        var headers = V2Requests.headers(context: context, configuration: configuration, .partner)
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
    static func profile(samlResponse: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let compact = samlResponse.filter { !$0.isWhitespace }
        var headers = V2Requests.headers(context: context, configuration: configuration, .partner)
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return HTTPCall(
            method: .post,
            path: V2Requests.base(context) + "/profiles/sso/Apple",
            headers: headers,
            body: Data(FormEncoding.encode([("SAMLResponse", compact)]).utf8)
        )
    }
}
