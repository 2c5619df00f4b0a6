import Foundation
import RegcodeEngine
import RegcodeSupport

/// Dynamic Client Registration calls (`/o/client/*`), shared by both API profiles.
enum DCRRequests {

    private static func headers(
        contentType: String,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> [(String, String)] {
        var headers = [("Content-Type", contentType)]
        if !context.deviceInfo.isEmpty {
            headers.append(("X-Device-Info", context.deviceInfo))
        }
        // No `Accept`: `dcrApi.json` does not list it for either DCR call.
        headers.append(("User-Agent", context.identity.userAgent ?? ClientIdentity.sdkUserAgent))
        if let address = context.forwardedFor {
            headers.append(("X-Forwarded-For", address))
        }
        return headers
    }

    /// `POST /o/client/register` with the software statement as JSON.
    static func register(
        softwareStatement: String,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        let body: JSONValue = ["software_statement": .string(softwareStatement), "redirect_uri": .string(context.identity.clientRedirectURI)]
        return HTTPCall(
            method: .post,
            path: "/o/client/register",
            headers: headers(contentType: "application/json;charset=utf-8", context: context, configuration: configuration),
            body: Data(JSONWriter.text(body).utf8)
        )
    }

    /// `POST /o/client/token`, `grant_type=client_credentials`, credentials in the form body (not the query)
    /// so they stay out of access logs.
    static func token(
        credentials: ClientCredentials,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        let form = FormEncoding.encode([
            ("client_id", credentials.clientID),
            ("client_secret", credentials.clientSecret),
            ("grant_type", "client_credentials"),
        ])
        return HTTPCall(
            method: .post,
            path: "/o/client/token",
            headers: headers(contentType: "application/x-www-form-urlencoded", context: context, configuration: configuration),
            body: Data(form.utf8)
        )
    }
}
