import Hummingbird

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error of Adobe's SSO Service, in the structure its page gives every error answer ("Error Response Structure",
/// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-premium/sso-service/sso-service):
///
/// ```json
/// {"status": "BAD_REQUEST", "error": {"status": 400, "code": "header_missing", "message": "…",
///  "action": "check_headers", "helpUrl": "…", "trace": "<uuid>"}}
/// ```
///
/// Codes, statuses, messages and actions are the page's "Error Codes Catalog"; the few situations it does not cover
/// are marked INFERRED where they are thrown.
struct SSOServiceError: Error, HTTPResponseError, Sendable, Equatable {
    /// The codes of Adobe's catalogue, plus REST v2's service provider code for an unknown `{serviceProvider}`.
    enum Code: String, Sendable, Equatable {
        case tokenInvalid = "token_invalid"
        case tokenExpired = "token_expired"
        case headerMissing = "header_missing"
        case headerInvalid = "header_invalid"
        case unauthorized
        case internalError = "internal_error"
        case requestNull = "request_null"
        case requestInvalid = "request_invalid"
        /// Not in the SSO Service's catalogue; REST v2's code for the same path segment (INFERRED).
        case invalidServiceProvider = "invalid_parameter_service_provider"
    }

    /// The catalogue's actions (not REST v2's: the SSO Service has its own words).
    enum Action: String, Sendable, Equatable, Encodable {
        case none
        case checkHeaders = "check_headers"
        case getNewToken = "get_new_token"
        case checkRequestBody = "check_request_body"
    }

    let status: HTTPResponse.Status
    let code: Code
    let message: String
    let action: Action

    init(_ status: HTTPResponse.Status, _ code: Code, _ message: String, _ action: Action) {
        self.status = status
        self.code = code
        self.message = message
        self.action = action
    }

    /// The top-level `status`: the status's name in capitals, as the page's `"BAD_REQUEST"` (INFERRED for the others,
    /// in the same style as its success answers' `"CREATED"` and `"OK"`).
    var statusName: String {
        switch self.status.code {
        case 400: "BAD_REQUEST"
        case 401: "UNAUTHORIZED"
        case 405: "METHOD_NOT_ALLOWED"
        default: "INTERNAL_SERVER_ERROR"
        }
    }

    private struct Detail: Encodable {
        let status: Int
        let code: String
        let message: String
        let action: Action
        let helpUrl: String
        let trace: String
    }

    private struct Body: Encodable {
        let status: String
        let error: Detail
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let detail = Detail(
            status: Int(self.status.code),
            code: self.code.rawValue,
            message: self.message,
            action: self.action,
            helpUrl: EnhancedError.helpURL,
            trace: UUID().uuidString.lowercased()
        )
        return try JSONBody.response(self.status, Body(status: self.statusName, error: detail))
    }
}

extension SSOServiceError {
    /// The endpoints whose wording the catalogue distinguishes ("… is required for link requests").
    enum Endpoint: String, Sendable {
        case post = "POST"
        case get = "GET"
        case link
        case unlink
        case list
    }

    static var ssoHeaderMissing: SSOServiceError {
        SSOServiceError(.badRequest, .headerMissing, "Either x-sso-id or x-sso-link header is required for POST requests", .checkHeaders)
    }

    /// `AP-Device-Identifier` missing: the catalogue lists it for POST serviceToken; link, unlink and list need the
    /// header too (their request tables) and are answered alike (INFERRED).
    static func deviceIdentifierMissing(_ endpoint: Endpoint) -> SSOServiceError {
        SSOServiceError(.badRequest, .headerMissing, "AP-Device-Identifier header is required for \(endpoint.rawValue) requests", .checkHeaders)
    }

    /// A header that is there but cannot be read (`AP-Device-Identifier`, `X-Device-Info`, `X-SSO-ID`): the catalogue
    /// names no such case for these headers (INFERRED).
    static func headerUnreadable(_ name: String) -> SSOServiceError {
        SSOServiceError(.badRequest, .headerInvalid, "\(name) header is invalid", .checkHeaders)
    }

    /// A link code that is unknown, used or expired: not in the catalogue (INFERRED).
    static var linkCodeInvalid: SSOServiceError {
        SSOServiceError(.badRequest, .headerInvalid, "The link code in X-SSO-LINK is unknown, already used or expired", .checkHeaders)
    }

    /// `AD-Service-Token` missing: 400 on GET serviceToken, 401 on link, unlink and list (the catalogue).
    static func serviceTokenMissing(_ endpoint: Endpoint) -> SSOServiceError {
        let status: HTTPResponse.Status = endpoint == .get ? .badRequest : .unauthorized
        return SSOServiceError(status, .headerMissing, "AD-Service-Token header is required for \(endpoint.rawValue) requests", .checkHeaders)
    }

    static var serviceTokenSignature: SSOServiceError {
        SSOServiceError(.unauthorized, .headerInvalid, "Invalid JWT signature in AD-Service-Token", .getNewToken)
    }

    static var serviceTokenSubject: SSOServiceError {
        SSOServiceError(.unauthorized, .headerInvalid, "JWT subject (sub) is missing or empty in AD-Service-Token", .getNewToken)
    }

    static var serviceTokenExpired: SSOServiceError {
        SSOServiceError(.unauthorized, .tokenExpired, "The token has expired", .getNewToken)
    }

    /// The calling device was unlinked from the token's common identifier (or never joined it): INFERRED, Adobe's
    /// page only says an unlinked device is "removed from the Single Sign On".
    static var deviceNotLinked: SSOServiceError {
        SSOServiceError(.unauthorized, .headerInvalid, "The device is not linked to the SSO profile of AD-Service-Token", .getNewToken)
    }

    static var unauthorizedAccess: SSOServiceError {
        SSOServiceError(.unauthorized, .unauthorized, "Unauthorized access", .none)
    }

    static var invalidServiceProvider: SSOServiceError {
        SSOServiceError(.badRequest, .invalidServiceProvider, "The service provider parameter value is missing or invalid.", .none)
    }

    static var requestNull: SSOServiceError {
        SSOServiceError(.badRequest, .requestNull, "Request object cannot be null", .none)
    }

    static var devicesMissing: SSOServiceError {
        SSOServiceError(.badRequest, .requestInvalid, "Devices list cannot be null or empty", .checkRequestBody)
    }

    static var internalError: SSOServiceError {
        SSOServiceError(.internalServerError, .internalError, "An internal error occurred", .none)
    }
}
