import Foundation
import RegcodeEngine
import RegcodeSupport

/// REST API v2 calls (`/api/v2/{serviceProvider}/…`).
enum V2Requests {
    /// The optional header groups a v2 endpoint takes; each endpoint sends only the groups Adobe's OAS lists for it
    /// (`restApiV2.json`, checked by `OpenAPIConformanceTests`).
    struct HeaderSet: OptionSet, Sendable {
        let rawValue: UInt8
        /// `AP-Device-Identifier` and `X-Device-Info`.
        static let device = HeaderSet(rawValue: 1 << 0)
        /// `AP-Visitor-Identifier`.
        static let visitor = HeaderSet(rawValue: 1 << 1)
        /// `AP-Partner-Framework-Status`.
        static let partnerFrameworkStatus = HeaderSet(rawValue: 1 << 2)

        /// `configuration`: only `Authorization`, `Accept` and `User-Agent`.
        static let configuration: HeaderSet = []
        /// `sessions/{code}` and `profiles/code/{code}`: no device headers.
        static let code: HeaderSet = [.visitor]
        /// `sessions`, `logout/{mvpd}`: device headers, no partner status.
        static let deviceBound: HeaderSet = [.device, .visitor]
        /// `profiles`, `profiles/{mvpd}`, decisions, and the partner endpoints.
        static let partner: HeaderSet = [.device, .visitor, .partnerFrameworkStatus]
    }

    /// The §7.1 headers of a v2 call: the common ones and the groups of `set`.
    static func headers(context: RequestContext, configuration: AdobePassClientConfiguration, _ set: HeaderSet) -> [(String, String)] {
        var headers: [(String, String)] = []
        // Room for every field below and one a caller adds (a content type), so a poll's array is allocated once.
        headers.reserveCapacity(9)
        if let token = context.accessToken {
            headers.append(("Authorization", "Bearer \(token)"))
        }
        // Empty values are left out rather than sent blank, so the backend reports the header as missing.
        // The checklist's policy puts the device headers on every call, the OpenAPI file's only where it lists them.
        let deviceHeaders = set.contains(.device) || context.deviceHeaders == .everyCall
        if deviceHeaders, !context.deviceID.isEmpty {
            headers.append(("AP-Device-Identifier", "fingerprint \(Data(context.deviceID.utf8).base64EncodedString())"))
        }
        if deviceHeaders, !context.deviceInfo.isEmpty {
            headers.append(("X-Device-Info", context.deviceInfo))
        }
        headers.append(("Accept", context.jsonCharset ? "application/json;charset=utf-8" : "application/json"))
        headers.append(("User-Agent", context.identity.userAgent ?? ClientIdentity.sdkUserAgent))
        if let address = context.forwardedFor {
            headers.append(("X-Forwarded-For", address))
        }
        if set.contains(.visitor), let visitorID = context.visitorID {
            headers.append(("AP-Visitor-Identifier", visitorID))
        }
        if set.contains(.partnerFrameworkStatus), let status = context.partnerFrameworkStatus {
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
            headers: headers(context: context, configuration: configuration, .configuration)
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
        var headers = headers(context: context, configuration: configuration, .deviceBound)
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
            headers: headers(context: context, configuration: configuration, .code)
        )
    }
}

extension V2Requests {
    /// `GET /api/v2/{sp}/profiles`: every profile the device holds (the v2 form of v1 `checkauthn`).
    static func profiles(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(method: .get, path: base(context) + "/profiles", headers: headers(context: context, configuration: configuration, .partner))
    }

    /// `GET /api/v2/{sp}/profiles/{mvpd}`: the profile for one MVPD, with its user-metadata attributes.
    static func profile(mvpd: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        HTTPCall(
            method: .get,
            path: base(context) + "/profiles/" + FormEncoding.pathSegment(mvpd),
            headers: headers(context: context, configuration: configuration, .partner)
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
        let body = Data(JSONWriter.text(["resources": .array(resources.map(JSONValue.string))]).utf8)
        var headers = headers(context: context, configuration: configuration, .partner)
        headers.append(("Content-Type", context.jsonCharset ? "application/json;charset=utf-8" : "application/json"))
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
            headers: headers(context: context, configuration: configuration, .deviceBound)
        )
    }
}
