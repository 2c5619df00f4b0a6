import Foundation
import RegcodeEngine

/// REST API v2 calls (`/api/v2/{serviceProvider}/…`).
enum V2Requests {
    /// The §7.1 header set every v2 call carries.
    static func headers(context: RequestContext, configuration: AdobePassClientConfiguration) -> [(String, String)] {
        var headers: [(String, String)] = []
        // Room for every field below and one a caller adds (a content type), so a poll's array is allocated once.
        headers.reserveCapacity(9)
        if let token = context.accessToken {
            headers.append(("Authorization", "Bearer \(token)"))
        }
        // Empty values are left out rather than sent blank, so the backend reports the header as missing.
        if !context.deviceID.isEmpty {
            headers.append(("AP-Device-Identifier", "fingerprint \(Data(context.deviceID.utf8).base64EncodedString())"))
        }
        if !context.deviceInfo.isEmpty {
            headers.append(("X-Device-Info", context.deviceInfo))
        }
        headers.append(("Accept", "application/json"))
        headers.append(("User-Agent", context.identity.userAgent))
        if let address = context.forwardedFor {
            headers.append(("X-Forwarded-For", address))
        }
        if let visitorID = context.visitorID {
            headers.append(("AP-Visitor-Identifier", visitorID))
        }
        if let status = context.partnerFrameworkStatus {
            headers.append(("AP-Partner-Framework-Status", status))
        }
        if let identity = context.tempPassIdentity {
            headers.append(("AP-TempPass-Identity", identity))
        }
        return headers
    }

    static func base(_ context: RequestContext) -> String {
        "/api/v2/" + FormEncoding.pathSegment(context.requestor)
    }

    /// `GET /api/v2/{sp}/configuration`.
    static func configuration(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(
            method: .get,
            path: base(context) + "/configuration",
            headers: headers(context: context, configuration: configuration)
        )
    }

    /// `POST /api/v2/{sp}/sessions` with `mvpd` (when preselected), `domainName` and `redirectUrl`.
    static func createSession(
        mvpd: String?,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        var form: [(String, String)] = []
        if let mvpd {
            form.append(("mvpd", mvpd))
        }
        form.append(("domainName", context.identity.domainName))
        form.append(("redirectUrl", context.identity.redirectURL))
        var headers = headers(context: context, configuration: configuration)
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return HTTPCall(
            method: .post,
            path: base(context) + "/sessions",
            headers: headers,
            body: Data(FormEncoding.encode(form).utf8)
        )
    }

    /// `GET /api/v2/{sp}/profiles/code/{code}`: the second-screen poll.
    static func pollProfile(code: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(
            method: .get,
            path: base(context) + "/profiles/code/" + FormEncoding.pathSegment(code),
            headers: headers(context: context, configuration: configuration)
        )
    }
}

extension V2Requests {
    private struct ResourcesBody: Encodable {
        var resources: [String]
    }

    /// `GET /api/v2/{sp}/profiles`: every profile the device holds (the v2 form of v1 `checkauthn`).
    static func profiles(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(method: .get, path: base(context) + "/profiles", headers: headers(context: context, configuration: configuration))
    }

    /// `GET /api/v2/{sp}/profiles/{mvpd}`: the profile for one MVPD, with its user-metadata attributes.
    static func profile(mvpd: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(
            method: .get,
            path: base(context) + "/profiles/" + FormEncoding.pathSegment(mvpd),
            headers: headers(context: context, configuration: configuration)
        )
    }

    /// `POST /api/v2/{sp}/decisions/{authorize|preauthorize}/{mvpd}` with `{"resources": […]}`.
    static func decisions(
        _ kind: String,
        mvpd: String,
        resources: [String],
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding an array of strings cannot fail; an empty body would still surface as a server-side 400.
        let body = (try? encoder.encode(ResourcesBody(resources: resources))) ?? Data()
        var headers = headers(context: context, configuration: configuration)
        headers.append(("Content-Type", "application/json"))
        return HTTPCall(
            method: .post,
            path: base(context) + "/decisions/" + kind + "/" + FormEncoding.pathSegment(mvpd),
            headers: headers,
            body: body
        )
    }

    /// `GET /api/v2/{sp}/logout/{mvpd}?redirectUrl=…`.
    static func logout(mvpd: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(
            method: .get,
            path: base(context) + "/logout/" + FormEncoding.pathSegment(mvpd),
            query: [("redirectUrl", context.identity.redirectURL)],
            headers: headers(context: context, configuration: configuration)
        )
    }
}
