import Hummingbird
import Logging
import OAuthDeviceGrant
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The OAuth 2.0 Device Authorization Grant (RFC 8628) as the configured provider serves it: discovery (RFC 8414,
/// OIDC Discovery), device authorization, token (device code and refresh), revocation (RFC 7009), introspection
/// (RFC 7662) and userinfo.
///
/// Paths and answers come from the provider's row of ``OAuthProviderRules``: its endpoint paths (a `{tenant}` or
/// `{realm}` in a template is a path capture), the name of the verification URI member, the status of token errors,
/// whether `slow_down` names the interval, whether an expired code is reported once, whether JSON needs
/// `Accept: application/json`. An endpoint the row lacks is not served.
struct OAuthRoutes: Sendable {
    let state: SharedSimulatorState
    let configuration: SimulatorConfiguration

    private var settings: OAuthServerSettings { self.configuration.oauth }
    private var rules: OAuthProviderRules { self.configuration.oauth.provider.rules }

    /// Where the verification page is served (``OAuthVerificationPages``).
    static let verificationPath = "/device"
    /// The metadata paths served whatever the provider (RFC 8414 §3, OIDC Discovery §4).
    static let wellKnownPaths = ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]

    /// Discovery is `config`, device authorization `sessions` (it creates a code), the token endpoint `poll`, the
    /// rest `other`; only userinfo takes a bearer token, so only it can be answered with an injected token expiry.
    var apiRoutes: [APIRoute] {
        var discovery = Self.wellKnownPaths
        if let path = self.rules.discoveryPath, !discovery.contains(path) { discovery.append(path) }
        var routes = discovery.map { APIRoute(RouterPath($0), .config, .oauth, credentials: .none, [.get: self.metadata]) }
        let endpoints = self.rules.endpoints
        routes.append(APIRoute(RouterPath(endpoints.deviceAuthorization), .sessions, .oauth, credentials: .none, [.post: self.deviceAuthorization]))
        routes.append(APIRoute(RouterPath(endpoints.token), .poll, .oauth, credentials: .none, [.post: self.token]))
        if let path = endpoints.revocation {
            routes.append(APIRoute(RouterPath(path), .other, .oauth, credentials: .none, [.post: self.revoke]))
        }
        if let path = endpoints.introspection {
            routes.append(APIRoute(RouterPath(path), .other, .oauth, credentials: .none, [.post: self.introspect]))
        }
        if let path = endpoints.userinfo {
            routes.append(APIRoute(RouterPath(path), .other, .oauth, credentials: .required, [.get: self.userinfo, .post: self.userinfo]))
        }
        return routes
    }

    // MARK: Discovery

    /// RFC 8414 §2 metadata with absolute URLs from the request's origin; the issuer is the origin plus whatever the
    /// metadata path has before `/.well-known` (Keycloak's realm, Entra's tenant, Okta's server).
    @Sendable func metadata(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let base = self.baseURL(request)
        let placeholders = self.placeholders(context)
        let path = request.uri.path
        let prefix = path.firstRange(of: "/.well-known/").map { String(path[..<$0.lowerBound]) } ?? ""
        func url(_ endpoint: OAuthEndpoint) -> String? {
            (try? self.rules.path(endpoint, placeholders: placeholders)).map { base + $0 }
        }
        let methods = self.rules.supportedClientAuthentication.map(OAuthClientAuthenticationName.known)
        let metadata = OAuthServerMetadata(
            issuer: base + prefix,
            tokenEndpoint: url(.token),
            deviceAuthorizationEndpoint: url(.deviceAuthorization),
            revocationEndpoint: url(.revocation),
            introspectionEndpoint: url(.introspection),
            userinfoEndpoint: url(.userinfo),
            grantTypesSupported: [OAuthGrantType.deviceCode.rawValue, OAuthGrantType.refreshToken.rawValue],
            tokenEndpointAuthMethodsSupported: methods,
            tokenEndpointAuthSigningAlgValuesSupported: self.rules.supportedClientAuthentication.contains(.privateKeyJWT)
                ? ["ES256", "RS256"] : nil,
            revocationEndpointAuthMethodsSupported: url(.revocation) == nil ? nil : methods,
            introspectionEndpointAuthMethodsSupported: url(.introspection) == nil ? nil : methods
        )
        return try JSONBody.response(.ok, metadata)
    }

    // MARK: Device authorization

    /// RFC 8628 §3.1-3.2: authenticates the client, checks the scope, issues a device code and a user code.
    @Sendable func deviceAuthorization(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await self.formFields(request, context: context, endpoint: "device_authorization")
        let client = try self.authenticate(request, fields: fields, context: context)
        let scope = fields[OAuthParameter.scope].flatMap { $0.isEmpty ? nil : $0 }
        if let allowed = client.client.scopes, !OAuthDeviceAuthority.scopes(scope).allSatisfy({ allowed.contains(String($0)) }) {
            throw self.refusal(.invalidScope, "scope beyond the client's", status: .badRequest, request: request, context: context)
        }
        let now = self.configuration.clock.nowMillis
        let code = try self.state.withLock { (state) throws(OAuthRefusal) in
            try self.consume(client, in: state, now: now, request: request, context: context)
            return state.oauth.authorize(clientId: client.client.clientId, scope: scope, now: now)
        }
        let base = self.baseURL(request)
        let verification = base + Self.verificationPath
        let complete = verification + "?" + FormEncoding.encode([("user_code", code.displayedUserCode)])
        let answer = OAuthDeviceAuthorizationResponse(
            deviceCode: code.deviceCode,
            userCode: code.displayedUserCode,
            verificationURI: verification,
            verificationURIComplete: self.rules.sendsVerificationURIComplete ? complete : nil,
            expiresIn: Int((code.expiresAt - code.issuedAt) / 1000),
            interval: Int(code.interval / 1000),
            message: self.rules.messageField == nil
                ? nil : "To sign in, use a web browser to open the page \(verification) and enter the code \(code.displayedUserCode) to authenticate."
        )
        context.logger.info(
            "oauth device code issued",
            metadata: ["oauth.client_id": .string(client.client.clientId), "oauth.user_code": .string(code.displayedUserCode)]
        )
        return try self.answer(.ok, try answer.encoded(for: self.rules), request: request)
    }

    // MARK: Token

    /// RFC 8628 §3.4-3.5 (device code) and RFC 6749 §6 (refresh, rotating the refresh token).
    @Sendable func token(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await self.formFields(request, context: context, endpoint: "token")
        guard let grantType = fields[OAuthParameter.grantType], !grantType.isEmpty else {
            throw self.refusal(.invalidRequest, "no grant_type", request: request, context: context)
        }
        guard let grant = OAuthGrantType(rawValue: grantType) else {
            throw self.refusal(.unsupportedGrantType, "grant_type \(grantType)", request: request, context: context)
        }
        let client = try self.authenticate(request, fields: fields, context: context)
        let clientId = client.client.clientId
        let now = self.configuration.clock.nowMillis
        switch grant {
        case .deviceCode:
            guard let deviceCode = fields[OAuthParameter.deviceCode], !deviceCode.isEmpty else {
                throw self.refusal(.invalidRequest, "no device_code", request: request, context: context)
            }
            let outcome = try self.state.withLock { (state) throws(OAuthRefusal) in
                try self.consume(client, in: state, now: now, request: request, context: context)
                return state.oauth.poll(deviceCode: deviceCode, clientId: clientId, now: now)
            }
            switch outcome {
            case .issued(let tokens):
                context.logger.info("oauth tokens issued", metadata: ["oauth.client_id": .string(clientId)])
                return try self.tokenAnswer(tokens, request: request)
            case .pending: throw self.pollError(.authorizationPending, request: request)
            case .slowDown(let interval):
                context.logger.debug("oauth poll too early", metadata: ["oauth.client_id": .string(clientId), "oauth.interval_ms": "\(interval)"])
                throw self.pollError(.slowDown, interval: self.rules.slowDownNamesInterval ? Int(interval / 1000) : nil, request: request)
            case .denied: throw self.pollError(.accessDenied, request: request)
            case .expired: throw self.pollError(.expiredToken, request: request)
            case .invalidGrant: throw self.pollError(.invalidGrant, request: request)
            }
        case .refreshToken:
            guard let refreshToken = fields[OAuthParameter.refreshToken], !refreshToken.isEmpty else {
                throw self.refusal(.invalidRequest, "no refresh_token", request: request, context: context)
            }
            let scope = fields[OAuthParameter.scope].flatMap { $0.isEmpty ? nil : $0 }
            let outcome = try self.state.withLock { (state) throws(OAuthRefusal) in
                try self.consume(client, in: state, now: now, request: request, context: context)
                return state.oauth.refresh(refreshToken: refreshToken, clientId: clientId, scope: scope, now: now)
            }
            switch outcome {
            case .issued(let tokens):
                context.logger.info("oauth tokens refreshed", metadata: ["oauth.client_id": .string(clientId)])
                return try self.tokenAnswer(tokens, request: request)
            case .invalidGrant:
                throw self.refusal(.invalidGrant, "refresh token unknown, rotated, revoked or expired", request: request, context: context)
            case .invalidScope: throw self.refusal(.invalidScope, "scope beyond the grant's", request: request, context: context)
            }
        }
    }

    // MARK: Revocation, introspection, userinfo

    /// RFC 7009 §2: 200 whether or not the token was known (§2.2); a refresh token takes its grant's access tokens
    /// with it.
    @Sendable func revoke(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await self.formFields(request, context: context, endpoint: "revocation")
        let client = try self.authenticate(request, fields: fields, context: context)
        guard let token = fields[OAuthParameter.token], !token.isEmpty else {
            throw self.refusal(.invalidRequest, "no token", status: .badRequest, request: request, context: context)
        }
        let now = self.configuration.clock.nowMillis
        let outcome = try self.state.withLock { (state) throws(OAuthRefusal) in
            try self.consume(client, in: state, now: now, request: request, context: context)
            return state.oauth.revoke(token: token, clientId: client.client.clientId, now: now)
        }
        context.logger.info("oauth revocation", metadata: ["oauth.client_id": .string(client.client.clientId), "oauth.revoked": "\(outcome)"])
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// RFC 7662 §2: the token's state for the client that holds it; any other token is `{"active": false}`.
    @Sendable func introspect(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await self.formFields(request, context: context, endpoint: "introspection")
        let client = try self.authenticate(request, fields: fields, context: context)
        guard let token = fields[OAuthParameter.token], !token.isEmpty else {
            throw self.refusal(.invalidRequest, "no token", status: .badRequest, request: request, context: context)
        }
        let now = self.configuration.clock.nowMillis
        let info = try self.state.withLock { (state) throws(OAuthRefusal) in
            try self.consume(client, in: state, now: now, request: request, context: context)
            state.oauth.countIntrospection()
            return state.oauth.tokenInfo(token, clientId: client.client.clientId, now: now)
        }
        var members: [String: JSONValue] = ["active": .bool(info != nil)]
        if let info {
            members["client_id"] = .string(info.clientId)
            members["sub"] = .string(info.subject)
            members["username"] = .string(info.subject)
            members["iat"] = .int(info.issuedAt / 1000)
            members["exp"] = .int(info.expiresAt / 1000)
            members["iss"] = .string(self.baseURL(request))
            if let scope = info.scope { members["scope"] = .string(scope) }
            if info.kind == .access { members["token_type"] = "Bearer" }
        }
        return Self.json(.ok, .object(members), headers: [.cacheControl: "no-store"])
    }

    /// The user behind an access token (OIDC Core §5.3); RFC 6750 §3 answers for a missing or bad token.
    @Sendable func userinfo(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        guard let token = request.bearerToken else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
        }
        let now = self.configuration.clock.nowMillis
        let info = self.state.withLock { state in
            state.oauth.countUserinfo()
            return state.oauth.tokenInfo(token, clientId: nil, now: now)
        }
        guard let info, info.kind == .access else {
            return Self.invalidTokenResponse()
        }
        let members: [String: JSONValue] = [
            "sub": .string(info.subject), "preferred_username": .string(info.subject), "name": .string("Simulated user \(info.subject)"),
        ]
        return Self.json(.ok, .object(members), headers: [.cacheControl: "no-store"])
    }

    /// RFC 6750 §3.1: the 401 of an expired, revoked or unknown bearer token (also the injected `tokenExpiry` fault).
    static func invalidTokenResponse() -> Response {
        Self.json(
            .unauthorized,
            ["error": "invalid_token", "error_description": "The access token is expired, revoked or unknown."],
            headers: [.wwwAuthenticate: #"Bearer error="invalid_token", error_description="The access token is expired, revoked or unknown.""#]
        )
    }

    // MARK: Support

    /// The form of a POST: `application/x-www-form-urlencoded` is required (RFC 6749 §3.2, RFC 8628 §3.1) unless
    /// lenient.
    private func formFields(_ request: Request, context: SimulatorRequestContext, endpoint: String) async throws -> [String: String] {
        guard request.hasFormContentType || self.configuration.lenient else {
            // Only the token endpoint answers errors with the provider's status; the others with RFC 6749's 400.
            throw self.refusal(
                .invalidRequest,
                "\(endpoint): Content-Type is not application/x-www-form-urlencoded",
                status: endpoint == "token" ? nil : .badRequest,
                request: request,
                context: context
            )
        }
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return FormData.parse(String(buffer: buffer))
    }

    private func authenticate(
        _ request: Request,
        fields: [String: String],
        context: SimulatorRequestContext
    ) throws(OAuthRefusal) -> OAuthClientAuthenticator.Authenticated {
        let base = self.baseURL(request)
        let placeholders = self.placeholders(context)
        var audiences: Set<String> = [base, base + request.uri.path]
        if let token = try? self.rules.path(.token, placeholders: placeholders) { audiences.insert(base + token) }
        let result = OAuthClientAuthenticator.authenticate(
            fields: fields,
            authorization: request.headers[.authorization],
            clients: self.settings.registeredClients,
            audiences: audiences,
            now: self.configuration.clock.nowMillis
        )
        switch result {
        case .success(let client):
            return client
        case .failure(let failure):
            if failure.isInvalidRequest {
                throw self.refusal(.invalidRequest, failure.reason, status: .badRequest, request: request, context: context)
            }
            self.state.withLock { $0.oauth.countInvalidClient() }
            context.logger.info("oauth client refused", metadata: ["oauth.error": "invalid_client", "oauth.reason": .string(failure.reason)])
            // RFC 6749 §5.2: 401, with a challenge when the client tried the Authorization header.
            let basic = request.headers[.authorization].flatMap { CredentialsHeader.value(of: $0, scheme: "basic") } != nil
            throw OAuthRefusal(
                error: .invalidClient,
                status: .unauthorized,
                headers: basic ? [.wwwAuthenticate: #"Basic realm="pass-sim""#] : [:],
                interval: nil,
                formEncoded: self.wantsForm(request)
            )
        }
    }

    /// Records a client assertion's `jti` (under the state lock); a replayed one is `invalid_client`.
    private func consume(
        _ client: OAuthClientAuthenticator.Authenticated,
        in state: SimulatorState,
        now: Int64,
        request: Request,
        context: SimulatorRequestContext
    ) throws(OAuthRefusal) {
        guard let assertion = client.assertion else { return }
        guard state.oauth.consumeAssertion(clientId: client.client.clientId, jti: assertion.jti, expiresAt: assertion.expiresAt, now: now) else {
            state.oauth.countInvalidClient()
            context.logger.info(
                "oauth client refused",
                metadata: ["oauth.error": "invalid_client", "oauth.reason": "client assertion replayed or living longer than an hour"]
            )
            throw OAuthRefusal(error: .invalidClient, status: .unauthorized, headers: [:], interval: nil, formEncoded: self.wantsForm(request))
        }
    }

    /// An error of the token endpoint's polling, with the provider's status (GitHub: 200; Auth0: 403, 429).
    private func pollError(_ error: OAuthTokenError, interval: Int? = nil, request: Request) -> OAuthRefusal {
        OAuthRefusal(
            error: error,
            status: HTTPResponse.Status(code: self.rules.tokenErrorStatus(for: error)),
            headers: [.cacheControl: "no-store"],
            interval: interval,
            formEncoded: self.wantsForm(request)
        )
    }

    /// A request error (RFC 6749 §5.2); on the token endpoint with the provider's status for the code.
    private func refusal(
        _ error: OAuthTokenError,
        _ reason: String,
        status: HTTPResponse.Status? = nil,
        request: Request,
        context: SimulatorRequestContext
    ) -> OAuthRefusal {
        context.logger.info("oauth request refused", metadata: ["oauth.error": .string(error.code), "oauth.reason": .string(reason)])
        return OAuthRefusal(
            error: error,
            status: status ?? HTTPResponse.Status(code: self.rules.tokenErrorStatus(for: error)),
            headers: [.cacheControl: "no-store"],
            interval: nil,
            formEncoded: self.wantsForm(request)
        )
    }

    private func tokenAnswer(_ tokens: OAuthDeviceAuthority.IssuedTokens, request: Request) throws -> Response {
        let answer = OAuthTokenResponse(
            accessToken: tokens.accessToken,
            tokenType: "Bearer",
            expiresIn: Int(tokens.expiresIn),
            refreshToken: tokens.refreshToken,
            scope: tokens.scope
        )
        return try self.answer(.ok, try JSONEncoder().encode(answer), request: request, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
    }

    /// A JSON answer (rewritten by the shared writer, which leaves slashes unescaped), or its members form-encoded
    /// when the provider answers JSON only to `Accept: application/json`.
    private func answer(_ status: HTTPResponse.Status, _ json: Data, request: Request, headers: HTTPFields = [:]) throws -> Response {
        guard let value = JSONValue(parsing: json) else { throw HTTPError(.internalServerError) }
        return self.wantsForm(request) ? Self.formAnswer(status, value, headers: headers) : Self.json(status, value, headers: headers)
    }

    static func formAnswer(_ status: HTTPResponse.Status, _ value: JSONValue, headers: HTTPFields) -> Response {
        let pairs = (value.objectValue ?? [:]).sorted { $0.key < $1.key }.compactMap { key, member -> (String, String)? in
            switch member {
            case .string(let text): (key, text)
            case .int(let number): (key, String(number))
            case .bool(let flag): (key, String(flag))
            case .double(let number): (key, String(number))
            case .null, .array, .object: nil
            }
        }
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: FormEncoding.encode(pairs))))
    }

    /// Whether the provider answers this request form-encoded (GitHub without `Accept: application/json`).
    private func wantsForm(_ request: Request) -> Bool {
        guard self.rules.requiresAcceptJSON else { return false }
        return !(request.headers[.accept] ?? "").lowercased().contains("application/json")
    }

    static func json(_ status: HTTPResponse.Status, _ value: JSONValue, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json;charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: JSONWriter.text(value))))
    }

    /// The origin (and prefix) URLs are built on: ``OAuthServerSettings/baseURL``, else the scheme pass-sim serves
    /// and the request's `Host`.
    func baseURL(_ request: Request) -> String {
        if let base = self.settings.baseURL { return base }
        let scheme = self.configuration.tls == nil ? "http" : "https"
        let host = request.head.authority ?? "localhost"
        return "\(scheme)://\(host)"
    }

    /// `{tenant}` and `{realm}` from the matched path, else from the settings.
    private func placeholders(_ context: SimulatorRequestContext) -> OAuthPathPlaceholders {
        OAuthPathPlaceholders(
            tenant: context.parameters.get("tenant") ?? self.settings.tenant,
            realm: context.parameters.get("realm") ?? self.settings.realm
        )
    }
}

/// An OAuth error answer (RFC 6749 §5.2): `{"error": …}` with the status, headers and encoding the provider uses.
struct OAuthRefusal: Error, HTTPResponseError {
    let error: OAuthTokenError
    let status: HTTPResponse.Status
    let headers: HTTPFields
    /// GitHub's `slow_down` interval, seconds.
    let interval: Int?
    /// Form-encoded (GitHub without `Accept: application/json`).
    let formEncoded: Bool

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var members: [String: JSONValue] = ["error": .string(self.error.code)]
        if let interval { members["interval"] = .int(Int64(interval)) }
        if self.formEncoded { return OAuthRoutes.formAnswer(self.status, .object(members), headers: self.headers) }
        return OAuthRoutes.json(self.status, .object(members), headers: self.headers)
    }
}
