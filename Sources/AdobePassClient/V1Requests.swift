import Foundation
import RegcodeEngine

/// Legacy REST API v1 ("clientless") calls: reggie regcodes, `tokens/authn` polling, `config`, `checkauthn`,
/// authorization and media tokens, preauthorization, user metadata and logout.
enum V1Requests {
    /// The `deviceId` parameter: base64 of the UTF-8 device id, the same bytes v2 sends as the fingerprint.
    static func deviceIDParameter(_ context: RequestContext) -> String {
        Data(context.deviceID.utf8).base64EncodedString()
    }

    /// Bearer token when DCR is in use, otherwise the §3.1 signed header, otherwise nothing (the backend then
    /// answers 401, which is the truthful outcome for a device without credentials).
    static func authorization(
        method: HTTPCall.Method,
        path: String,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> String? {
        if let token = context.accessToken {
            return "Bearer \(token)"
        }
        if let keys = context.signingKeys {
            var requestTime = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            switch configuration.signatureFault {
            case nil: break
            case .requestTimeInSeconds: requestTime /= 1000
            case .requestTimeOffset(let offset): requestTime += offset.milliseconds
            }
            return AdobeRequestSigner.authorizationHeader(
                method: method.rawValue,
                requestor: context.requestor,
                requestURI: path,
                publicKey: keys.publicKey,
                secret: keys.secret,
                nonce: UUID().uuidString.lowercased(),
                requestTimeMs: requestTime
            )
        }
        return nil
    }

    static func headers(
        method: HTTPCall.Method,
        path: String,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> [(String, String)] {
        var headers: [(String, String)] = []
        if let authorization = authorization(method: method, path: path, context: context, configuration: configuration) {
            headers.append(("Authorization", authorization))
        }
        if !context.deviceInfo.isEmpty {
            headers.append(("X-Device-Info", context.deviceInfo))
        }
        headers.append(("Accept", "application/json"))
        headers.append(("User-Agent", context.identity.userAgent ?? ClientIdentity.sdkUserAgent))
        if let address = context.forwardedFor {
            headers.append(("X-Forwarded-For", address))
        }
        return headers
    }

    /// `GET /api/v1/config/{requestor}?format=json`.
    static func configuration(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let path = "/api/v1/config/" + FormEncoding.pathSegment(context.requestor)
        return HTTPCall(
            method: .get,
            path: path,
            query: [("format", "json")],
            headers: headers(method: .get, path: path, context: context, configuration: configuration)
        )
    }

    /// `POST /reggie/v1/{requestor}/regcode` with `deviceId`, the configured `ttl` (if any), `format=json` and the
    /// preselected `mvpd`.
    static func createRegcode(
        mvpd: String?,
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        let path = "/reggie/v1/" + FormEncoding.pathSegment(context.requestor) + "/regcode"
        var form: [(String, String)] = [("deviceId", deviceIDParameter(context))]
        if let ttl = configuration.registrationCodeTTL {
            form.append(("ttl", String(ttl.components.seconds)))
        }
        form.append(("format", "json"))
        if let mvpd {
            form.append(("mvpd", mvpd))
        }
        var headers = headers(method: .post, path: path, context: context, configuration: configuration)
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return HTTPCall(method: .post, path: path, headers: headers, body: Data(FormEncoding.encode(form).utf8))
    }

    /// `GET /api/v1/tokens/authn`: 404 while pending, 200 with the AuthN token once the user finished.
    /// The code itself is not sent: the token is bound to (requestor, deviceId).
    static func pollToken(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        let path = "/api/v1/tokens/authn"
        return HTTPCall(
            method: .get,
            path: path,
            query: [("requestor", context.requestor), ("deviceId", deviceIDParameter(context)), ("format", "json")],
            headers: headers(method: .get, path: path, context: context, configuration: configuration)
        )
    }

    /// A device call on `/api/v1/…`: `requestor`, `deviceId`, the call's own parameters, `format=json`.
    private static func deviceCall(
        _ method: HTTPCall.Method,
        _ path: String,
        parameters: [(String, String)] = [],
        context: RequestContext,
        configuration: AdobePassClientConfiguration
    ) -> HTTPCall {
        HTTPCall(
            method: method,
            path: path,
            query: [("requestor", context.requestor), ("deviceId", deviceIDParameter(context))] + parameters + [("format", "json")],
            headers: headers(method: method, path: path, context: context, configuration: configuration)
        )
    }

    /// `GET /api/v1/checkauthn`: 200 when the device holds a valid AuthN token, 403 otherwise.
    static func checkAuthentication(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(.get, "/api/v1/checkauthn", context: context, configuration: configuration)
    }

    /// `GET /api/v1/authorize?resource=…`: 200 with the AuthZ token, 403 when denied or not authenticated.
    static func authorize(resource: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(.get, "/api/v1/authorize", parameters: [("resource", resource)], context: context, configuration: configuration)
    }

    /// `GET /api/v1/tokens/media?resource=…`: the short media token.
    static func mediaToken(resource: String, context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(.get, "/api/v1/tokens/media", parameters: [("resource", resource)], context: context, configuration: configuration)
    }

    /// `GET /api/v1/preauthorize?resource=a,b`: resources are comma-delimited, as Adobe documents.
    static func preauthorize(resources: [String], context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(
            .get,
            "/api/v1/preauthorize",
            parameters: [("resource", resources.joined(separator: ","))],
            context: context,
            configuration: configuration
        )
    }

    /// `GET /api/v1/tokens/usermetadata`.
    static func userMetadata(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(.get, "/api/v1/tokens/usermetadata", context: context, configuration: configuration)
    }

    /// `DELETE /api/v1/logout`: 204, the device's AuthN and AuthZ tokens are gone.
    static func logout(context: RequestContext, configuration: AdobePassClientConfiguration) -> HTTPCall {
        deviceCall(.delete, "/api/v1/logout", context: context, configuration: configuration)
    }
}
