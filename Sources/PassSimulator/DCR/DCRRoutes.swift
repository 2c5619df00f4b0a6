import Hummingbird
import Logging
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dynamic Client Registration: `POST /o/client/register` and `POST /o/client/token` (reference §6).
///
/// Unless lenient, both require their documented `Content-Type` and a decodable `X-Device-Info` (§6.2, §6.3), and
/// registration requires a statement signed with the simulator's key (else `invalid_software_statement`, unless
/// unsigned statements are accepted, when its `software_id` must be approved, else `unapproved_software_statement`) and
/// a `redirect_uri` the statement lists (else `invalid_redirect_uri`).
struct DCRRoutes: Sendable {
    let state: SharedSimulatorState
    let configuration: SimulatorConfiguration

    private struct RegistrationRequest: Decodable {
        let software_statement: String
        let redirect_uri: String?
    }

    private struct RegistrationResponse: Encodable {
        let client_id: String
        let client_secret: String
        let redirect_uris: [String]
        let grant_types: [String]
        let scopes: [String]
        let client_id_issued_at: Int64
    }

    private struct TokenResponse: Encodable {
        let id: String
        let access_token: String
        let created_at: Int64
        let expires_in: Int64
        let token_type: String
    }

    /// Registration and tokens: class `dcr`, no credentials.
    var apiRoutes: [APIRoute] {
        [
            APIRoute("o/client/register", .dcr, .dcr, credentials: .none, [.post: self.registerClient]),
            APIRoute("o/client/token", .dcr, .dcr, credentials: .none, [.post: self.issueToken]),
        ]
    }

    @Sendable func registerClient(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        guard request.hasJSONContentType || self.configuration.lenient else {
            throw self.refused(.invalidRequest, "Content-Type is not application/json", context: context)
        }
        try self.checkDeviceInfo(request, context: context)
        let body = try await JSONBody.decode(RegistrationRequest.self, from: request, context: context, orThrow: DCRError.invalidRequest)
        guard let statement = SoftwareStatement(body.software_statement) else {
            throw self.refused(.invalidSoftwareStatement, "not a JWT with a software_id", context: context)
        }
        let softwareId = statement.softwareId
        let signed = self.configuration.statementKey.verify(body.software_statement) != nil
        guard signed || self.configuration.acceptUnsignedStatements || self.configuration.lenient else {
            context.logger.info(
                "DCR registration refused",
                metadata: [
                    "dcr.error": "invalid_software_statement", "dcr.software_id": .string(softwareId),
                    "dcr.reason": "not signed with the simulator's statement key (RS256)",
                ]
            )
            throw DCRError.invalidSoftwareStatement
        }
        guard self.configuration.approves(softwareId: softwareId, signed: signed) else {
            context.logger.info(
                "DCR registration refused",
                metadata: ["dcr.error": "unapproved_software_statement", "dcr.software_id": .string(softwareId)]
            )
            throw DCRError.unapprovedSoftwareStatement
        }
        if let redirect = body.redirect_uri {
            guard !redirect.isEmpty, redirect.contains(":") else { throw DCRError.invalidRedirectURI }
            // A signed statement allows only the URIs it lists; an accepted unsigned one only when it lists any.
            if signed || statement.redirectURIs != nil, !(statement.redirectURIs ?? []).contains(redirect), !self.configuration.lenient {
                context.logger.info(
                    "DCR registration refused",
                    metadata: [
                        "dcr.error": "invalid_redirect_uri", "dcr.software_id": .string(softwareId),
                        "dcr.redirect_uri": .string(redirect),
                        "dcr.reason": "not one of the statement's redirect_uris",
                    ]
                )
                throw DCRError.invalidRedirectURI
            }
        }
        let client = self.state.withLock { $0.registerClient(softwareId: softwareId, redirectURIs: body.redirect_uri.map { [$0] } ?? []) }
        context.logger.info(
            "DCR client registered",
            metadata: ["dcr.client_id": .string(client.clientId), "dcr.software_id": .string(softwareId)]
        )
        let answer = RegistrationResponse(
            client_id: client.clientId,
            client_secret: client.clientSecret,
            redirect_uris: client.redirectURIs,
            grant_types: ["client_credentials"],
            scopes: ["api:client:v2"],
            client_id_issued_at: client.issuedAtSeconds
        )
        return try JSONBody.response(.created, answer, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
    }

    @Sendable func issueToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        guard request.hasFormContentType || self.configuration.lenient else {
            throw self.refused(.invalidRequest, "Content-Type is not application/x-www-form-urlencoded", context: context)
        }
        try self.checkDeviceInfo(request, context: context)
        let fields = try await FormData.fields(of: request, context: context)
        guard let clientId = fields["client_id"], !clientId.isEmpty,
            let clientSecret = fields["client_secret"], !clientSecret.isEmpty,
            let grantType = fields["grant_type"], !grantType.isEmpty
        else { throw DCRError.invalidRequest }
        guard grantType == "client_credentials" else { throw DCRError.unsupportedGrantType }
        guard let grant = self.state.withLock({ $0.issueToken(clientId: clientId, clientSecret: clientSecret) }) else {
            context.logger.info("DCR token refused", metadata: ["dcr.client_id": .string(clientId), "dcr.error": "invalid_client"])
            throw DCRError.invalidClient
        }
        context.logger.debug(
            "DCR access token issued",
            metadata: ["dcr.client_id": .string(clientId), "dcr.token_id": .string(grant.id)]
        )
        let answer = TokenResponse(
            id: grant.id,
            access_token: grant.accessToken,
            created_at: grant.createdAt,
            expires_in: (grant.expiresAt - grant.createdAt) / 1000,
            token_type: "bearer"
        )
        return try JSONBody.response(.created, answer, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
    }

    /// `X-Device-Info` must be present and Base64 (unless lenient, where only a present header is decoded).
    private func checkDeviceInfo(_ request: Request, context: SimulatorRequestContext) throws {
        guard let header = request.headers[.xDeviceInfo] else {
            if self.configuration.lenient { return }
            throw self.refused(.invalidRequest, "X-Device-Info is missing", context: context)
        }
        guard DeviceInfo(headerValue: header) != nil else {
            throw self.refused(.invalidRequest, "X-Device-Info is not Base64", context: context)
        }
    }

    private func refused(_ error: DCRError, _ reason: String, context: SimulatorRequestContext) -> DCRError {
        context.logger.info("DCR request refused", metadata: ["dcr.error": .string(error.error), "dcr.reason": .string(reason)])
        return error
    }
}

/// The claims of a DCR software statement that registration reads, from its structure only (the signature is checked
/// with ``SoftwareStatementKey``).
struct SoftwareStatement {
    /// `software_id`.
    let softwareId: String
    /// `redirect_uris`, when the statement lists them.
    let redirectURIs: [String]?

    /// The claims of a JWT with three Base64url parts and a JSON-object payload holding a `software_id`, else `nil`.
    init?(_ jwt: String) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        // An empty signature is allowed: unsecured JWTs (`alg: none`) are structurally valid.
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts.allSatisfy({ Self.isBase64URL($0) }),
            Base64.decodeLenient(parts[0]) != nil,
            let payload = Base64.decodeLenient(parts[1])
        else { return nil }
        guard case .object(let claims)? = JSONValue(parsing: payload), let softwareId = claims["software_id"]?.stringValue, !softwareId.isEmpty
        else { return nil }
        // `redirect_uris`, when present and not null, must be a list of strings.
        switch claims["redirect_uris"] {
        case nil, .null?:
            self.redirectURIs = nil
        case .array(let elements)?:
            let uris = elements.compactMap(\.stringValue)
            guard uris.count == elements.count else { return nil }
            self.redirectURIs = uris
        default:
            return nil
        }
        self.softwareId = softwareId
    }

    /// The `software_id` of a structurally valid statement, else `nil`.
    static func softwareId(of jwt: String) -> String? {
        SoftwareStatement(jwt)?.softwareId
    }

    private static func isBase64URL(_ part: Substring) -> Bool {
        part.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
                true
            default:
                false
            }
        }
    }
}
