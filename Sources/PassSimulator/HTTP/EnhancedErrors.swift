import Hummingbird
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A REST API v2 "Enhanced Error Code" response body (reference §9.2), thrown by route handlers.
struct EnhancedError: Error, HTTPResponseError, Encodable, Sendable {
    enum Action: String, Encodable, Sendable {
        case none
        case configuration
        case applicationRegistration = "application-registration"
        case authentication
        case authorization
        case retry
    }

    static let helpURL = "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html"

    let action: Action
    /// The HTTP status, also echoed as the body's integer `status`.
    let status: HTTPResponse.Status
    let code: String
    let message: String
    let details: String?
    let trace: String

    init(_ action: Action, _ status: HTTPResponse.Status, code: String, message: String, details: String? = nil) {
        self.action = action
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        // A fresh id per error mirrors Adobe's support-correlation `trace`.
        self.trace = UUID().uuidString.lowercased()
    }

    private enum CodingKeys: String, CodingKey {
        case action, status, code, message, details, helpUrl, trace
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.action, forKey: .action)
        try container.encode(Int(self.status.code), forKey: .status)
        try container.encode(self.code, forKey: .code)
        try container.encode(self.message, forKey: .message)
        try container.encodeIfPresent(self.details, forKey: .details)
        try container.encode(Self.helpURL, forKey: .helpUrl)
        try container.encode(self.trace, forKey: .trace)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONBody.response(self.status, self)
    }
}

extension EnhancedError {
    static var invalidServiceProvider: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_parameter_service_provider",
            message: "The service provider parameter value is missing or invalid."
        )
    }

    static var invalidMVPD: EnhancedError {
        EnhancedError(.none, .badRequest, code: "invalid_parameter_mvpd", message: "The mvpd parameter value is missing or invalid.")
    }

    static var invalidRedirectURL: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_parameter_redirect_url",
            message: "The redirect url parameter value is missing or invalid."
        )
    }

    /// A `domainName` the service provider does not list. Adobe's catalogue names no code for it; this one follows its
    /// `invalid_parameter_*` pattern (INFERRED).
    static var invalidDomainName: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_parameter_domain_name",
            message: "The domain name parameter value is missing or invalid."
        )
    }

    static var invalidCode: EnhancedError {
        EnhancedError(.none, .badRequest, code: "invalid_parameter_code", message: "The code parameter value is missing or invalid.")
    }

    static var invalidDeviceInfo: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_header_device_info",
            message: "The device information header value is missing or invalid."
        )
    }

    static var invalidDeviceIdentifier: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_header_device_identifier",
            message: "The device identifier header value is missing or invalid."
        )
    }

    static var invalidAuthenticationSession: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_authentication_session",
            message: "The authentication session associated with this request is missing or invalid."
        )
    }

    static var invalidAccessToken: EnhancedError {
        EnhancedError(
            .applicationRegistration,
            .unauthorized,
            code: "invalid_access_token_client_application",
            message: "The access token is invalid."
        )
    }

    /// A valid token whose software statement was not issued for the path's service provider.
    static var invalidAccessTokenServiceProvider: EnhancedError {
        EnhancedError(
            .applicationRegistration,
            .unauthorized,
            code: "invalid_access_token_service_provider",
            message: "The access token is invalid for the specified service provider."
        )
    }

    static func invalidIntegration(serviceProvider: String, mvpd: String) -> EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_integration",
            message: "The integration between the specified service provider and mvpd does not exist or is disabled.",
            details: "\(mvpd) is not integrated with \(serviceProvider)."
        )
    }

    /// A body in another format than the endpoint reads. Adobe documents the required `Content-Type` but no error code
    /// for it; the simulator answers as the HTTP framework behind Adobe's API would (415), in the enhanced format.
    static func unsupportedMediaType(expected: String) -> EnhancedError {
        EnhancedError(
            .none,
            .unsupportedMediaType,
            code: "unsupported_media_type",
            message: "The request body must be sent with Content-Type: \(expected)."
        )
    }
}

/// A DCR (`/o/client/*`) error: HTTP 400 with `{"error": "<code>"}` (reference §6.2–6.4).
struct DCRError: Error, HTTPResponseError, Sendable {
    let error: String

    static let invalidRequest = DCRError(error: "invalid_request")
    static let invalidSoftwareStatement = DCRError(error: "invalid_software_statement")
    static let invalidClient = DCRError(error: "invalid_client")
    static let unsupportedGrantType = DCRError(error: "unsupported_grant_type")
    static let invalidRedirectURI = DCRError(error: "invalid_redirect_uri")
    static let unapprovedSoftwareStatement = DCRError(error: "unapproved_software_statement")

    var status: HTTPResponse.Status { .badRequest }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONBody.response(.badRequest, ["error": self.error])
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// An error shown to a person in a browser (authenticate, login and activation pages).
struct HTMLError: Error, HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let title: String
    let message: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        HTMLPage.response(
            self.status,
            HTMLPage.page(title: self.title, body: "<h1>\(HTML.escape(self.title))</h1><p>\(HTML.escape(self.message))</p>")
        )
    }
}

extension EnhancedError {
    static var invalidResources: EnhancedError {
        EnhancedError(.none, .badRequest, code: "invalid_parameter_resources", message: "The resources parameter value is missing or invalid.")
    }

    static func tooManyResources(limit: Int) -> EnhancedError {
        EnhancedError(
            .configuration,
            .forbidden,
            code: "too_many_resources",
            message: "The request names more resources than allowed.",
            details: "At most \(limit) resources may be named per call."
        )
    }

    static var authenticatedProfileMissing: EnhancedError {
        EnhancedError(
            .authentication,
            .forbidden,
            code: "authenticated_profile_missing",
            message: "The authenticated profile is missing or invalid for the specified MVPD."
        )
    }

    static var authenticatedProfileExpired: EnhancedError {
        EnhancedError(
            .authentication,
            .forbidden,
            code: "authenticated_profile_expired",
            message: "The authenticated profile for the specified MVPD has expired."
        )
    }

    static func deniedByMVPD(preauthorization: Bool, details: String) -> EnhancedError {
        let step = preauthorization ? "pre-authorization" : "authorization"
        return EnhancedError(
            .none,
            .forbidden,
            code: preauthorization ? "preauthorization_denied_by_mvpd" : "authorization_denied_by_mvpd",
            message: "The MVPD has returned a \"Deny\" decision when requesting \(step) for the specified resource.",
            details: details
        )
    }
}
