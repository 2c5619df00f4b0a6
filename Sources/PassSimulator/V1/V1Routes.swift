import Hummingbird
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Legacy REST API v1 ("clientless", reference §2, §4, §5): registration codes, AuthN/AuthZ/media tokens,
/// preauthorization, user metadata and logout, in XML (default) or JSON.
///
/// Device calls need credentials: a DCR bearer token (header or `access_token` parameter) or the §3.1 HMAC header.
/// Calls of the login web app (reading a record, `checkauthn/{code}`) and the browser's `authenticate` do not.
struct V1Routes: Sendable {
    let state: SharedSimulatorState
    let configuration: SimulatorConfiguration
    let faults: FaultInjector
    let mediaTokens: MediaTokenIssuer

    /// Adobe's documented ceiling for `ttl` (reference §4.1).
    static let maxRegcodeTTLSeconds: Int64 = 36_000

    /// Routes a device or the login web app calls (throttled, fault-injected); the login web app's calls (reading or
    /// deleting a code, `checkauthn/{code}`) need no credentials.
    var apiRoutes: [APIRoute] {
        Self.withSuffixes("reggie/v1/{requestor}/regcode", .sessions, credentials: .requiredFor(.post), [.post: self.createRegcode])
            + [
                APIRoute(
                    "reggie/v1/{requestor}/regcode/{code}",
                    .sessions,
                    .v1,
                    credentials: .none,
                    [.get: self.getRegcode, .delete: self.deleteRegcode]
                ),
                APIRoute("api/v1/config/{requestor}", .config, .v1, [.get: self.config]),
                APIRoute("api/v1/authenticate/{code}", .poll, .v1, [.get: self.authenticateCode]),
                APIRoute("api/v1/checkauthn/{code}", .other, .v1, credentials: .none, [.get: self.checkAuthenticationOfCode]),
            ]
            + Self.withSuffixes("api/v1/checkauthn", .other, [.get: self.checkAuthentication])
            + Self.withSuffixes("api/v1/tokens/authn", .poll, [.get: self.authenticationToken])
            + Self.withSuffixes("api/v1/authorize", .decisions, [.get: self.authorize])
            + Self.withSuffixes("api/v1/tokens/authz", .decisions, [.get: self.authorizationToken])
            + Self.withSuffixes("api/v1/tokens/media", .decisions, [.get: self.mediaToken])
            + Self.withSuffixes("api/v1/mediatoken", .decisions, [.get: self.mediaToken])
            + Self.withSuffixes("api/v1/preauthorize", .decisions, [.get: self.preauthorize])
            + Self.withSuffixes("api/v1/tokens/usermetadata", .other, [.get: self.userMetadata])
            + Self.withSuffixes("api/v1/logout", .other, [.delete: self.logout])
    }

    /// The second screen's browser entry point (not throttled: it is not in Adobe's throttled list).
    func registerBrowser(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("api/v1/authenticate", [.get: self.authenticate])
    }

    /// `path`, `path.json` and `path.xml`.
    private static func withSuffixes(
        _ path: String,
        _ endpointClass: EndpointClass,
        credentials: RouteClassification.Credentials = .required,
        _ handlers: [HTTPRequest.Method: RouterGroup<SimulatorRequestContext>.Handler]
    ) -> [APIRoute] {
        ["", ".json", ".xml"].map { suffix in
            APIRoute(RouterPath(path + suffix), endpointClass, .v1, credentials: credentials, handlers)
        }
    }

    // MARK: Request parsing

    /// What every device call needs: its parameters, answer format, requestor, authenticated caller and deviceId.
    private struct DeviceCall {
        let fields: [String: String]
        let format: V1Format
        let requestor: String
        let caller: String
        let deviceId: String
    }

    private func deviceCall(
        _ request: Request,
        context: SimulatorRequestContext,
        requestor pathRequestor: String? = nil,
        readBody: Bool = false
    ) async throws -> DeviceCall {
        let fields =
            readBody
            ? try await FormData.fields(of: request, context: context)
            : request.uri.query.map { FormData.parse($0) } ?? [:]
        let format = V1Format(request, fields: fields)
        guard let requestor = pathRequestor ?? V2Routes.nonEmpty(fields["requestor"]) else {
            throw V1Error.missing("requestor").with(format)
        }
        guard self.configuration.accepts(serviceProvider: requestor) else {
            throw V1Error.badRequest("Unknown requestor '\(requestor)'").with(format)
        }
        let caller = try await self.authenticateCaller(request, context: context, fields: fields, requestor: requestor, format: format)
        guard let deviceId = V2Routes.nonEmpty(fields["deviceId"]) else {
            throw V1Error.missing("deviceId").with(format)
        }
        return DeviceCall(fields: fields, format: format, requestor: requestor, caller: caller, deviceId: deviceId)
    }

    /// The caller's identity: `client:<client_id>` for a DCR token, `key:<public key>` for a signed header; else 401.
    private func authenticateCaller(
        _ request: Request,
        context: SimulatorRequestContext,
        fields: [String: String],
        requestor: String,
        format: V1Format
    ) async throws -> String {
        if let header = request.headers[.authorization] {
            if let token = request.bearerToken {
                return try await self.client(forToken: token, requestor: requestor, format: format, context: context)
            }
            guard let signed = SignedAuthorization(header: header) else {
                context.logger.info("v1 request refused", metadata: ["v1.auth.reason": "malformed Authorization header"])
                throw V1Error.notAuthorized(SignedAuthorization.Refusal.malformed.rawValue).with(format)
            }
            if let refusal = signed.verify(
                requestor: requestor,
                keys: self.configuration.signingKeys,
                nowMillis: self.configuration.clock.nowMillis,
                window: self.configuration.signatureWindow
            ) {
                context.logger.info(
                    "v1 request refused",
                    metadata: [
                        "v1.auth.reason": .string(refusal.rawValue), "v1.public_key": .string(signed.publicKey),
                        "v1.requestor": .string(requestor),
                    ]
                )
                throw V1Error.notAuthorized(refusal.rawValue).with(format)
            }
            let match = signed.matches(method: request.method, path: Self.pathWithoutSuffix(request.uri.path))
            if !match.method || !match.uri {
                // Real clients sign loosely (reference §3.1), so this is worth seeing but not worth refusing.
                context.logger.notice(
                    "v1 signature does not name this request",
                    metadata: [
                        "v1.public_key": .string(signed.publicKey), "v1.signed_method": .string(signed.method),
                        "http.method": .string(request.method.rawValue), "v1.method_matches": .stringConvertible(match.method),
                        "v1.uri_matches": .stringConvertible(match.uri),
                    ]
                )
            }
            return "key:" + signed.publicKey
        }
        if let token = V2Routes.nonEmpty(fields["access_token"]) {
            return try await self.client(forToken: token, requestor: requestor, format: format, context: context)
        }
        throw V1Error.notAuthorized("missing Authorization").with(format)
    }

    /// The DCR client of a token, whose software statement must cover the requestor (unless lenient).
    private func client(forToken token: String, requestor: String, format: V1Format, context: SimulatorRequestContext) async throws -> String {
        guard let client = self.state.withLock({ $0.client(forAccessToken: token) }) else {
            throw V1Error.notAuthorized("invalid or expired access token").with(format)
        }
        guard self.configuration.softwareStatement(client.softwareId, covers: requestor) else {
            context.logger.info(
                "access token used outside its software statement",
                metadata: ["requestor": .string(requestor), "dcr.client_id": .string(client.clientId)]
            )
            throw V1Error.notAuthorized("access token not issued for requestor \(requestor)").with(format)
        }
        return "client:" + client.clientId
    }

    /// A path parameter without its `.json`/`.xml` format suffix.
    private static func parameter(_ context: SimulatorRequestContext, _ name: String) -> String {
        Self.pathWithoutSuffix(context.parameters.get(name) ?? "")
    }

    private static func pathWithoutSuffix(_ text: String) -> String {
        for suffix in [".json", ".xml"] where text.hasSuffix(suffix) {
            return String(text.dropLast(suffix.count))
        }
        return text
    }

    private func resource(_ call: DeviceCall) throws -> String {
        guard let resource = V2Routes.nonEmpty(call.fields["resource"]) else { throw V1Error.missing("resource").with(call.format) }
        return resource
    }

    // MARK: Registration codes

    /// `POST /reggie/v1/{requestor}/regcode` → 201 with the registration record.
    @Sendable func createRegcode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context, requestor: Self.parameter(context, "requestor"), readBody: true)
        let ttlMillis: Int64
        switch call.fields["ttl"].map(\.trimmed) {
        case nil, "":
            ttlMillis = self.configuration.codeTTL.milliseconds
        case let text?:
            guard let seconds = Int64(text), seconds > 0 else {
                throw V1Error.badRequest("ttl must be a positive number of seconds").with(call.format)
            }
            guard seconds <= Self.maxRegcodeTTLSeconds else {
                throw V1Error.badRequest("ttl must not exceed \(Self.maxRegcodeTTLSeconds) seconds").with(call.format)
            }
            ttlMillis = seconds * 1000
        }
        let mvpd = V2Routes.nonEmpty(call.fields["mvpd"])
        if let mvpd, self.configuration.mvpd(id: mvpd) == nil {
            throw V1Error.badRequest("Unknown mvpd '\(mvpd)'").with(call.format)
        }
        if let mvpd, !self.configuration.integrates(serviceProvider: call.requestor, mvpd: mvpd) {
            throw V1Error.badRequest("Unknown integration between '\(call.requestor)' and '\(mvpd)'").with(call.format)
        }
        let deviceInfo = (request.headers[.xDeviceInfo] ?? call.fields["device_info"]).flatMap { DeviceInfo(headerValue: $0) }
        let session = self.state.withLock {
            $0.createRegcode(
                requestor: call.requestor,
                deviceId: call.deviceId,
                clientId: call.caller,
                mvpd: mvpd,
                ttlMillis: ttlMillis,
                info: V1RegcodeInfo(
                    deviceType: V2Routes.nonEmpty(call.fields["deviceType"]),
                    deviceUser: V2Routes.nonEmpty(call.fields["deviceUser"]),
                    appId: V2Routes.nonEmpty(call.fields["appId"]),
                    appVersion: V2Routes.nonEmpty(call.fields["appVersion"]),
                    registrationURL: V2Routes.nonEmpty(call.fields["registrationURL"])
                ),
                deviceInfo: deviceInfo,
                userAgent: request.headers[.userAgent],
                peerAddress: request.clientAddress(context: context, trustingForwardedFor: self.configuration.trustForwardedFor),
                earlyExpiryOffset: self.faults.earlyExpiryOffset(ttlMillis: ttlMillis)
            )
        }
        context.logger.info(
            "regcode issued",
            metadata: [
                "requestor": .string(call.requestor), "code": .string(session.code), "caller": .string(call.caller),
                "mvpd": .string(mvpd ?? "-"), "ttl_s": .stringConvertible(ttlMillis / 1000),
            ]
        )
        return Self.record(session).response(.created, format: call.format, root: "ns2:regcode", xmlAttributes: Self.regcodeNamespace)
    }

    /// `GET /reggie/v1/{requestor}/regcode/{code}` → the record of a pending code, else 404.
    @Sendable func getRegcode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let format = V1Format(request)
        guard
            let session = self.state.withLock({
                $0.session(
                    code: Self.parameter(context, "code"),
                    serviceProvider: Self.parameter(context, "requestor"),
                    api: .v1
                )
            }), case .pending = session.status
        else { throw V1Error.notFound.with(format) }
        return Self.record(session).response(.ok, format: format, root: "ns2:regcode", xmlAttributes: Self.regcodeNamespace)
    }

    /// `DELETE /reggie/v1/{requestor}/regcode/{code}` → 204; the code can no longer be used.
    @Sendable func deleteRegcode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let code = Self.parameter(context, "code")
        guard self.state.withLock({ $0.deleteRegcode(code: code, requestor: Self.parameter(context, "requestor")) }) else {
            throw V1Error.notFound.with(V1Format(request))
        }
        context.logger.info("regcode deleted", metadata: ["code": .string(code.uppercased())])
        return Response(status: .noContent)
    }

    private static let regcodeNamespace = #"xmlns:ns2="model.mvc.reggie.pass.adobe.com""#

    private static func record(_ session: AuthenticationSession) -> V1Value {
        let info = session.v1Info ?? V1RegcodeInfo()
        func optional(_ text: String?) -> V1Value { text.map(V1Value.string) ?? .null }
        return .object([
            ("id", .string(session.sessionId)),
            ("code", .string(session.code)),
            ("requestor", .string(session.serviceProvider)),
            ("mvpd", optional(session.mvpd)),
            // Numbers, unlike the token `expires` strings (reference §10).
            ("generated", .integer(session.notBefore)),
            ("expires", .integer(session.notAfter)),
            (
                "info",
                .object([
                    ("deviceId", .string(session.deviceIdentifier)),
                    ("deviceType", optional(info.deviceType)),
                    ("deviceUser", optional(info.deviceUser)),
                    ("appId", optional(info.appId)),
                    ("appVersion", optional(info.appVersion)),
                    ("registrationURL", optional(info.registrationURL)),
                ])
            ),
        ])
    }

    // MARK: Web app and browser

    /// `GET /api/v1/config/{requestor}` → the MVPD list.
    @Sendable func config(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let format = V1Format(request)
        let requestor = Self.parameter(context, "requestor")
        guard self.configuration.accepts(serviceProvider: requestor) else {
            throw V1Error.badRequest("Unknown requestor '\(requestor)'").with(format)
        }
        // Every v1 API is protected by DCR (or, before it, the signed header): the MVPD list too.
        let fields = request.uri.query.map { FormData.parse($0) } ?? [:]
        _ = try await self.authenticateCaller(request, context: context, fields: fields, requestor: requestor, format: format)
        let origin = V2Routes.origin(request, configuration: self.configuration)
        // The AccessEnabler's MVPD `tempPass` flag: only TempPass MVPDs carry it.
        let tempPass = self.state.withLock { state in Set(state.mvpdsInForce().map(\.id).filter { state.isTempPass($0) }) }
        let mvpds = self.state.withLock { $0.mvpdsInForce() }.map { mvpd in
            V1Value.object(
                [
                    ("id", .string(mvpd.id)),
                    ("displayName", .string(mvpd.displayName)),
                    ("logoUrl", .string(mvpd.logoUrl ?? "\(origin)/_sim/logos/\(FormData.encodeComponent(mvpd.id)).svg")),
                    ("iFrameRequired", .bool(false)),
                    ("authPerAggregator", .bool(mvpd.authPerAggregator)),
                    // Platform SSO fields of the v1 MVPD list (sso.md §2.5); a missing boarding status is left out.
                    ("platformMappingId", mvpd.platformMappingId.map(V1Value.string) ?? .null),
                    ("boardingStatus", mvpd.boardingStatus.map { V1Value.string($0.rawValue) } ?? .null),
                    ("enablePlatformServices", .bool(mvpd.enablePlatformServices)),
                    ("displayInPlatformPicker", .bool(mvpd.displayInPlatformPicker)),
                    ("enforcePlatformPermissions", .bool(mvpd.enforcePlatformPermissions)),
                    ("requiredMetadataFields", .list(item: "field", mvpd.requiredMetadataFields.map(V1Value.string))),
                ] + (tempPass.contains(mvpd.id) ? [("tempPass", .bool(true))] : [])
            )
        }
        let body = V1Value.object([
            (
                "requestor",
                .object([("id", .string(requestor)), ("name", .string(requestor)), ("mvpds", .list(item: "mvpd", mvpds))])
            )
        ])
        return body.response(.ok, format: format, root: "config")
    }

    /// `GET /api/v1/authenticate?reg_code=…&requestor_id=…&mso_id=…&domain_name=…&redirect_url=…` (browser): on to the
    /// simulated MVPD login (or a picker when no MVPD is known), which completes the code.
    @Sendable func authenticate(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        guard let code = V2Routes.nonEmpty(query["reg_code"]) else {
            throw HTMLError(status: .badRequest, title: "Missing code", message: "The request names no registration code.")
        }
        let requestor = V2Routes.nonEmpty(query["requestor_id"])
        let mvpd = V2Routes.nonEmpty(query["mso_id"])
        if let mvpd, self.configuration.mvpd(id: mvpd) == nil {
            throw HTMLError(status: .badRequest, title: "Unknown TV provider", message: "The TV provider \(mvpd) is not known.")
        }
        guard
            let session = self.state.withLock({
                $0.resumeSession(
                    code: code,
                    serviceProvider: requestor,
                    api: .v1,
                    mvpd: mvpd,
                    domainName: V2Routes.nonEmpty(query["domain_name"]),
                    redirectUrl: V2Routes.nonEmpty(query["redirect_url"])
                )
            })
        else {
            // Adobe: "SC 400 during authenticate — the server did not find the registration code" (reference §4.5).
            throw HTMLError(status: .badRequest, title: "Unknown code", message: "The code \(code) was not found. Check it on your TV.")
        }
        return try ActivationPages.secondScreenResponse(for: session, configuration: self.configuration)
    }

    /// `GET /api/v1/checkauthn/{code}?requestor=…` (login web app): 200 once the code's device is authenticated, else 403.
    @Sendable func checkAuthenticationOfCode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let format = V1Format(request)
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        guard let requestor = V2Routes.nonEmpty(query["requestor"]) else { throw V1Error.missing("requestor").with(format) }
        guard let session = self.state.withLock({ $0.session(code: Self.parameter(context, "code"), serviceProvider: requestor, api: .v1) }),
            case .completed = session.status,
            case .valid = self.state.withLock({ $0.v1AuthenticationState(requestor: requestor, deviceId: session.deviceIdentifier) })
        else { throw V1Error(.forbidden, "Forbidden").with(format) }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    // MARK: Device: authentication

    /// `GET /api/v1/checkauthn` → 200 with a valid AuthN token, else 403 "Not Authenticated" / "Authentication token expired".
    @Sendable func checkAuthentication(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        switch self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: call.deviceId) }) {
        case .valid: return Response(status: .ok, headers: [.cacheControl: "no-store"])
        case .expired: throw V1Error(.forbidden, "Authentication token expired").with(call.format)
        case .absent: throw V1Error(.forbidden, "Not Authenticated").with(call.format)
        }
    }

    /// `GET /api/v1/tokens/authn` — the device's poll: 404 while pending, 200 with the token, 410 once it expired.
    @Sendable func authenticationToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        switch self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: call.deviceId) }) {
        case .valid(let token):
            return Self.authenticationBody(token, requestor: call.requestor).response(.ok, format: call.format, root: "authentication")
        case .expired: throw V1Error(.gone, "Gone", details: "Authentication token expired").with(call.format)
        case .absent: throw V1Error.notFound.with(call.format)
        }
    }

    /// `GET /api/v1/authenticate/{code}?requestor=…` (seen in the ESPN app, not documented): the AuthN token the code
    /// produced; 404 until then.
    @Sendable func authenticateCode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCallWithoutDeviceId(request, context: context)
        guard let session = self.state.withLock({ $0.session(code: Self.parameter(context, "code"), serviceProvider: call.requestor, api: .v1) }),
            case .completed = session.status
        else { throw V1Error.notFound.with(call.format) }
        switch self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: session.deviceIdentifier) }) {
        case .valid(let token):
            return Self.authenticationBody(token, requestor: call.requestor).response(.ok, format: call.format, root: "authentication")
        case .expired: throw V1Error(.gone, "Gone", details: "Authentication token expired").with(call.format)
        case .absent: throw V1Error.notFound.with(call.format)
        }
    }

    /// `authenticate/{code}` is keyed by the code, so unlike the other device calls it needs no `deviceId`.
    private func deviceCallWithoutDeviceId(_ request: Request, context: SimulatorRequestContext) async throws -> (requestor: String, format: V1Format)
    {
        let fields = request.uri.query.map { FormData.parse($0) } ?? [:]
        let format = V1Format(request, fields: fields)
        guard let requestor = V2Routes.nonEmpty(fields["requestor"]) else { throw V1Error.missing("requestor").with(format) }
        _ = try await self.authenticateCaller(request, context: context, fields: fields, requestor: requestor, format: format)
        return (requestor, format)
    }

    private static func authenticationBody(_ token: SimulatedProfile, requestor: String) -> V1Value {
        .object([
            ("requestor", .string(requestor)),
            ("mvpd", .string(token.mvpd)),
            ("userId", .string(token.userId)),
            // A string of epoch milliseconds, as Adobe sends it (reference §4.8).
            ("expires", .string(String(token.notAfter))),
        ])
    }

    // MARK: Device: authorization

    /// `GET /api/v1/authorize` → 200 with the AuthZ token, 403 "User not authorized" (+details) or "User not Authenticated".
    @Sendable func authorize(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        let resource = try self.resource(call)
        let grant = try await self.grant(call, resource: resource, context: context)
        return Self.authorizationBody(grant, requestor: call.requestor).response(.ok, format: call.format, root: "authorization")
    }

    /// `GET /api/v1/tokens/authz` → the stored AuthZ token: 200, 412 (not authenticated), 404 (none), 410 (expired).
    @Sendable func authorizationToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        let resource = try self.resource(call)
        switch self.state.withLock({ $0.v1AuthorizationState(requestor: call.requestor, deviceId: call.deviceId, resource: resource) }) {
        case .notAuthenticated: throw V1Error(.preconditionFailed, "User not authenticated").with(call.format)
        case .absent: throw V1Error.notFound.with(call.format)
        case .expired: throw V1Error(.gone, "Gone").with(call.format)
        case .valid(let grant):
            return Self.authorizationBody(grant, requestor: call.requestor).response(.ok, format: call.format, root: "authorization")
        }
    }

    /// `GET /api/v1/tokens/media` (and `/api/v1/mediatoken`) → a short media token. Without a valid AuthZ token for the
    /// resource, authorization runs first, with the same 403 answers as `authorize`.
    @Sendable func mediaToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        let resource = try self.resource(call)
        let grant: AuthorizationGrant
        if case .valid(let stored) = self.state.withLock({
            $0.v1AuthorizationState(requestor: call.requestor, deviceId: call.deviceId, resource: resource)
        }) {
            grant = stored
        } else {
            grant = try await self.grant(call, resource: resource, context: context)
        }
        guard case .valid(let token) = self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: call.deviceId) }) else {
            throw V1Error(.forbidden, "User not Authenticated").with(call.format)
        }
        let media = self.mediaTokens.issue(
            requestor: call.requestor,
            resource: resource,
            mvpd: grant.mvpd,
            userId: token.userId,
            sessionId: token.sessionId,
            now: self.configuration.clock.nowMillis,
            ttl: self.configuration.mediaTokenTTL
        )
        let body = V1Value.object([
            ("resource", .string(resource)),
            ("requestor", .string(call.requestor)),
            ("expires", .string(String(media.notAfter))),
            ("serializedToken", .string(media.serializedToken)),
            ("userId", .string(token.userId)),
            ("mvpdId", .string(grant.mvpd)),
        ])
        return body.response(.ok, format: call.format, root: "play")
    }

    /// `GET /api/v1/preauthorize?resource=a,b,c` → one `{id, authorized, error?}` per resource.
    @Sendable func preauthorize(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        let resources = try self.resource(call).split(separator: ",").map(\.trimmed).filter { !$0.isEmpty }
        guard !resources.isEmpty else { throw V1Error.missing("resource").with(call.format) }
        let limit = self.configuration.preauthorizeResourceLimit
        guard resources.count <= limit else {
            throw V1Error(.forbidden, "Forbidden", details: "Too many resources: at most \(limit) per call").with(call.format)
        }
        guard case .valid(let token) = self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: call.deviceId) }) else {
            throw V1Error(.preconditionFailed, "User not authenticated").with(call.format)
        }
        let decisions = self.state.withLock { $0.decide(resources: resources, mvpd: token.mvpd) }
        let items = decisions.map { decision -> V1Value in
            var fields: [(String, V1Value)] = [("id", .string(decision.resource)), ("authorized", .bool(decision.denial == nil))]
            if let details = decision.denial {
                fields.append(
                    (
                        "error",
                        .object([
                            ("status", .integer(403)),
                            ("code", .string("authorization_denied_by_mvpd")),
                            ("message", .string("User not authorized")),
                            ("details", .string(details)),
                            ("helpUrl", .string(EnhancedError.helpURL)),
                            ("trace", .string(UUID().uuidString.lowercased())),
                            ("action", .string("none")),
                        ])
                    )
                )
            }
            return .object(fields)
        }
        var response = V1Value.object([("resources", .list(item: "resource", items))])
            .response(.ok, format: call.format, root: "preauthorization")
        response.headers[.adobeResponseConfidence] = "full"
        response.headers[.adobeRequestId] = UUID().uuidString.lowercased()
        return response
    }

    /// Runs authorization for `resource`, storing the AuthZ token, or throws the 403 answer.
    private func grant(_ call: DeviceCall, resource: String, context: SimulatorRequestContext) async throws -> AuthorizationGrant {
        let (authentication, outcome) = self.state.withLock { $0.v1Authorize(requestor: call.requestor, deviceId: call.deviceId, resource: resource) }
        switch (authentication, outcome) {
        case (_, .success(let grant)?):
            return grant
        case (_, .failure(let denial)?):
            context.logger.info("v1 authorization denied", metadata: ["requestor": .string(call.requestor), "resource": .string(resource)])
            throw V1Error(.forbidden, "User not authorized", details: denial.details).with(call.format)
        case (.expired, nil):
            throw V1Error(.forbidden, "User not Authenticated", details: "Authentication token expired").with(call.format)
        case (_, nil):
            throw V1Error(.forbidden, "User not Authenticated").with(call.format)
        }
    }

    private static func authorizationBody(_ grant: AuthorizationGrant, requestor: String) -> V1Value {
        .object([
            ("mvpd", .string(grant.mvpd)),
            ("resource", .string(grant.resource)),
            ("requestor", .string(requestor)),
            ("expires", .string(String(grant.notAfter))),
        ])
    }

    // MARK: Device: metadata and logout

    /// `GET /api/v1/tokens/usermetadata` → `{updated, encrypted, data}`; 412 without a valid AuthN token, 404 when the
    /// token carries no metadata.
    @Sendable func userMetadata(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        guard case .valid(let token) = self.state.withLock({ $0.v1AuthenticationState(requestor: call.requestor, deviceId: call.deviceId) }) else {
            throw V1Error(.preconditionFailed, "User not authenticated").with(call.format)
        }
        guard !token.attributes.isEmpty else { throw V1Error.notFound.with(call.format) }
        let names = token.attributes.keys.sorted()
        let body = V1Value.object([
            ("updated", .integer(token.notBefore / 1000)),
            ("encrypted", .list(item: "value", names.filter { token.attributes[$0]!.encrypted }.map(V1Value.string))),
            ("data", .object(names.map { ($0, V1Value(token.attributes[$0]!.value)) })),
        ])
        return body.response(.ok, format: call.format, root: "metadata")
    }

    /// `DELETE /api/v1/logout` → 204; the device's AuthN and AuthZ tokens are gone (the MVPD is not involved).
    @Sendable func logout(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let call = try await self.deviceCall(request, context: context)
        self.state.withLock { $0.v1Logout(requestor: call.requestor, deviceId: call.deviceId) }
        context.logger.info("v1 logout", metadata: ["requestor": .string(call.requestor), "caller": .string(call.caller)])
        return Response(status: .noContent)
    }
}

extension HTTPFields.Element.Name {
    static let adobeResponseConfidence = Self("Adobe-Response-Confidence")!
    static let adobeRequestId = Self("Adobe-Request-Id")!
}
