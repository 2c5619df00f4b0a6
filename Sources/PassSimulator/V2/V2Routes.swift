import Hummingbird
import Logging

/// REST API v2: configuration, sessions, authenticate and profiles (reference §7).
///
/// Unless lenient: the access token's software statement must cover the path's service provider, the service
/// provider must be configured, a named MVPD must be integrated with it, sessions (create, resume) must be sent as a
/// form, and sessions create, profiles and logout need a decodable `X-Device-Info` (§7.1).
struct V2Routes: Sendable {
    let state: SimulatorState
    let configuration: SimulatorConfiguration
    let faults: FaultInjector

    /// Every route but the browser's `authenticate` needs an access token.
    var apiRoutes: [APIRoute] {
        [
            APIRoute("api/v2/{sp}/configuration", .config, .v2, [.get: self.getConfiguration]),
            APIRoute("api/v2/{sp}/sessions", .sessions, .v2, [.post: self.createSession]),
            APIRoute("api/v2/{sp}/sessions/{code}", .sessions, .v2, [.get: self.getSession, .post: self.resumeSession]),
            APIRoute("api/v2/authenticate/{sp}/{code}", .other, .v2, credentials: .none, [.get: self.authenticate]),
            APIRoute("api/v2/{sp}/profiles", .other, .v2, [.get: self.getProfiles]),
            APIRoute("api/v2/{sp}/profiles/{mvpd}", .other, .v2, [.get: self.getProfilesForMVPD]),
            APIRoute("api/v2/{sp}/profiles/code/{code}", .poll, .v2, [.get: self.getProfileForCode]),
            APIRoute("api/v2/{sp}/logout/{mvpd}", .other, .v2, [.get: self.logout]),
        ]
    }

    // MARK: Bodies

    private struct SessionResponse: Encodable {
        var actionName: String
        var actionType: String
        var reasonType: String
        var missingParameters: [String]?
        var url: String
        var code: String?
        var sessionId: String
        var mvpd: String?
        var serviceProvider: String
        // Strings on purpose: Adobe sends the code window as strings of epoch milliseconds (reference §7.2).
        var notBefore: String?
        var notAfter: String?
    }

    private struct SessionStatusResponse: Encodable {
        var code: String
        var sessionId: String
        var existingParameters: [String: String]
        var missingParameters: [String]
        var device: NormalizedDevice
        var notBefore: String
        var notAfter: String
    }

    private struct ProfilesResponse: Encodable {
        var profiles: [String: ProfileBody]
    }

    struct ProfileBody: Encodable {
        struct Attribute: Encodable {
            var value: MetadataValue
            var state: String
        }

        var notBefore: Int64
        var notAfter: Int64
        var issuer: String
        var type = "regular"
        var attributes: [String: Attribute]
        var sessionId: String

        init(_ profile: SimulatedProfile) {
            self.notBefore = profile.notBefore
            self.notAfter = profile.notAfter
            self.issuer = profile.mvpd
            self.attributes = profile.attributes.mapValues { Attribute(value: $0.value, state: $0.encrypted ? "enc" : "plain") }
            self.sessionId = profile.sessionId
        }
    }

    private struct ConfigurationResponse: Encodable {
        struct Requestor: Encodable {
            var id: String
            var name: String
            var domains: [Domain]
            var mvpds: [MVPD]
        }

        struct Domain: Encodable {
            var name: String
            var mvpdInitiated = false
        }

        struct MVPD: Encodable {
            var id: String
            var displayName: String
            var logoUrl: String
            var isTempPass = false
            var isProxy = false
            var authPerAggregator: Bool
            var authPerBrowserSession = false
            var passiveAuthnEnabled = false
            var enablePlatformServices = false
            var displayInPlatformPicker = false
            var enforcePlatformPermissions = false
        }

        var device: String
        var clientType = "html5"
        var os: String
        var requestor: Requestor
    }

    // MARK: Handlers

    @Sendable func getConfiguration(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (_, sp) = try await self.authorize(request, context: context)
        let info = request.headers[.xDeviceInfo].flatMap { DeviceInfo(headerValue: $0) }
        let origin = Self.origin(request)
        let body = ConfigurationResponse(
            device: info?["model"] ?? "unknown",
            os: info?["osName"] ?? "Unknown",
            requestor: .init(
                id: sp,
                name: sp,
                domains: self.configuration.domains.map { .init(name: $0) },
                mvpds: self.configuration.mvpds.map { mvpd in
                    .init(
                        id: mvpd.id,
                        displayName: mvpd.displayName,
                        logoUrl: mvpd.logoUrl ?? "\(origin)/_sim/logos/\(FormData.encodeComponent(mvpd.id)).svg",
                        authPerAggregator: mvpd.authPerAggregator
                    )
                }
            )
        )
        return try JSONBody.response(.ok, body)
    }

    @Sendable func createSession(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        let info = try self.deviceInfo(request)
        try self.requireForm(request)
        let fields = try await FormData.fields(of: request, context: context)
        let mvpd = try self.mvpdParameter(fields, serviceProvider: sp)
        let creation = await self.state.createSession(
            serviceProvider: sp,
            deviceIdentifier: device,
            clientId: clientId,
            mvpd: mvpd,
            domainName: Self.nonEmpty(fields["domainName"]),
            redirectUrl: Self.nonEmpty(fields["redirectUrl"]),
            deviceInfo: info,
            userAgent: request.headers[.userAgent],
            peerAddress: request.forwardedFor ?? context.remoteAddress,
            earlyExpiryOffset: self.faults.earlyExpiryOffset(ttlMillis: self.configuration.codeTTL.milliseconds)
        )
        switch creation {
        case .created(let session):
            context.logger.info(
                "code issued",
                metadata: [
                    "sp": .string(sp), "code": .string(session.code), "dcr.client_id": .string(clientId),
                    "device": .string(device), "mvpd": .string(session.mvpd ?? "-"),
                ]
            )
            return try JSONBody.response(.ok, Self.sessionResponse(session))
        case .alreadyAuthenticated(let profile):
            context.logger.info("session answered with existing profile", metadata: ["sp": .string(sp), "mvpd": .string(profile.mvpd)])
            return try JSONBody.response(.ok, Self.authorizeResponse(sp: sp, profile: profile))
        }
    }

    @Sendable func getSession(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (_, sp) = try await self.authorize(request, context: context)
        let session = try await self.liveSession(context, serviceProvider: sp)
        var existing = ["serviceProvider": sp]
        existing["mvpd"] = session.mvpd
        existing["domain"] = session.domainName
        existing["redirectUrl"] = session.redirectUrl
        let body = SessionStatusResponse(
            code: session.code,
            sessionId: session.sessionId,
            existingParameters: existing,
            missingParameters: session.missingParameters,
            device: NormalizedDevice(info: session.deviceInfo, userAgent: session.userAgent, peerAddress: session.peerAddress),
            notBefore: String(session.notBefore),
            notAfter: String(session.notAfter)
        )
        return try JSONBody.response(.ok, body)
    }

    @Sendable func resumeSession(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (_, sp) = try await self.authorize(request, context: context)
        let code = try context.parameters.require("code")
        try self.requireForm(request)
        let fields = try await FormData.fields(of: request, context: context)
        let mvpd = try self.mvpdParameter(fields, serviceProvider: sp)
        guard
            let session = await self.state.resumeSession(
                code: code,
                serviceProvider: sp,
                api: .v2,
                mvpd: mvpd,
                domainName: Self.nonEmpty(fields["domainName"]),
                redirectUrl: Self.nonEmpty(fields["redirectUrl"])
            )
        else { throw EnhancedError.invalidCode }
        switch session.status {
        case .expired, .superseded:
            throw EnhancedError.invalidAuthenticationSession
        case .completed(let profile):
            return try JSONBody.response(.ok, Self.authorizeResponse(sp: sp, profile: profile))
        case .pending:
            var body = Self.sessionResponse(session)
            if session.mvpd == nil {
                // A resume that still lacks the MVPD is answered with `retry`, not `resume` (reference §7.3).
                body.actionName = "retry"
            }
            return try JSONBody.response(.ok, body)
        }
    }

    /// The second screen's entry point: on to the MVPD login (or an MVPD picker first).
    @Sendable func authenticate(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sp = context.parameters.get("sp") ?? ""
        let code = context.parameters.get("code") ?? ""
        guard self.configuration.accepts(serviceProvider: sp) else {
            throw HTMLError(status: .badRequest, title: "Unknown service provider", message: "The service provider \(sp) is not known.")
        }
        guard let session = await self.state.session(code: code, serviceProvider: sp, api: .v2) else {
            throw HTMLError(status: .badRequest, title: "Unknown code", message: "The code \(code) was not found. Check it on your TV.")
        }
        return try ActivationPages.secondScreenResponse(for: session, configuration: self.configuration)
    }

    @Sendable func getProfiles(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        let profiles = await self.state.profiles(serviceProvider: sp, deviceIdentifier: device, clientId: clientId)
        return try JSONBody.response(.ok, ProfilesResponse(profiles: profiles.mapValues(ProfileBody.init)))
    }

    @Sendable func getProfilesForMVPD(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        let mvpd = try self.mvpdPath(context, serviceProvider: sp)
        let profiles = await self.state.profiles(serviceProvider: sp, deviceIdentifier: device, clientId: clientId)
        return try JSONBody.response(.ok, ProfilesResponse(profiles: profiles.filter { $0.key == mvpd }.mapValues(ProfileBody.init)))
    }

    /// The device's poll: `{}` while pending, the new profile once the code completed.
    @Sendable func getProfileForCode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (_, sp) = try await self.authorize(request, context: context)
        _ = try Self.deviceIdentifier(request, required: false)
        let session = try await self.liveSession(context, serviceProvider: sp)
        switch session.status {
        case .completed(let profile):
            return try JSONBody.response(.ok, ProfilesResponse(profiles: [profile.mvpd: ProfileBody(profile)]))
        default:
            return Self.emptyProfiles()
        }
    }

    /// Drops the device's profile for the MVPD (reference §7.8). When there was one, the answer is `logout`: the user
    /// agent should visit `url` (the simulated MVPD's logout page, which returns to `redirectUrl`); otherwise there is
    /// nothing left to do and the answer is `complete`.
    @Sendable func logout(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        let mvpd = try self.mvpdPath(context, serviceProvider: sp)
        let redirectUrl = request.uri.query.flatMap { FormData.parse($0)["redirectUrl"] }.flatMap(Self.nonEmpty)
        let removed = await self.state.removeProfile(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd)
        context.logger.info("logout", metadata: ["sp": .string(sp), "mvpd": .string(mvpd), "profile.removed": .stringConvertible(removed)])
        var entry = ["actionName": "complete", "actionType": "none", "mvpd": mvpd]
        if removed {
            entry["actionName"] = "logout"
            entry["actionType"] = "interactive"
            var query: KeyValuePairs<String, String> = ["noflash": "true", "mso_id": mvpd, "requestor_id": sp]
            if let redirectUrl {
                query = ["noflash": "true", "mso_id": mvpd, "requestor_id": sp, "redirect_url": redirectUrl]
            }
            entry["url"] = Self.origin(request) + "/adobe-services/logout?" + FormData.query(query)
        }
        return try JSONBody.response(.ok, ["logouts": [mvpd: entry]])
    }

    /// `http://<Host>` of the request, for the absolute URLs Adobe publishes.
    static func origin(_ request: Request) -> String {
        request.head.authority.map { "http://\($0)" } ?? ""
    }

    // MARK: Validation

    /// The client id behind the request's bearer token (else 401 `invalid_access_token_client_application`) and the
    /// path's service provider (else 400 `invalid_parameter_service_provider`), which the token's software statement
    /// must cover (else 401 `invalid_access_token_service_provider`).
    func authorize(_ request: Request, context: SimulatorRequestContext) async throws -> (clientId: String, serviceProvider: String) {
        guard let token = request.bearerToken, let client = await self.state.client(forAccessToken: token) else {
            throw EnhancedError.invalidAccessToken
        }
        let sp = try self.serviceProvider(context)
        guard self.configuration.softwareStatement(client.softwareId, covers: sp) else {
            context.logger.info(
                "access token used outside its software statement",
                metadata: ["sp": .string(sp), "dcr.client_id": .string(client.clientId), "dcr.software_id": .string(client.softwareId)]
            )
            throw EnhancedError.invalidAccessTokenServiceProvider
        }
        return (client.clientId, sp)
    }

    /// Unless lenient, the body must be declared as a form (reference §7.1); else 415.
    func requireForm(_ request: Request) throws {
        guard request.hasFormContentType || self.configuration.lenient else {
            throw EnhancedError.unsupportedMediaType(expected: "application/x-www-form-urlencoded")
        }
    }

    /// The path's `{mvpd}`: configured (else `invalid_parameter_mvpd`) and integrated with the service provider (else
    /// `invalid_integration`).
    func mvpdPath(_ context: SimulatorRequestContext, serviceProvider: String) throws -> String {
        let mvpd = try context.parameters.require("mvpd")
        try self.checkMVPD(mvpd, serviceProvider: serviceProvider)
        return mvpd
    }

    private func checkMVPD(_ mvpd: String, serviceProvider: String) throws {
        guard self.configuration.mvpd(id: mvpd) != nil else { throw EnhancedError.invalidMVPD }
        guard self.configuration.integrates(serviceProvider: serviceProvider, mvpd: mvpd) else {
            throw EnhancedError.invalidIntegration(serviceProvider: serviceProvider, mvpd: mvpd)
        }
    }

    func serviceProvider(_ context: SimulatorRequestContext) throws -> String {
        guard let sp = context.parameters.get("sp"), self.configuration.accepts(serviceProvider: sp) else {
            throw EnhancedError.invalidServiceProvider
        }
        return sp
    }

    /// A pending or completed session of the path's `{code}`; unknown → `invalid_parameter_code`, dead → `invalid_authentication_session`.
    private func liveSession(_ context: SimulatorRequestContext, serviceProvider: String) async throws -> AuthenticationSession {
        let code = try context.parameters.require("code")
        guard let session = await self.state.session(code: code, serviceProvider: serviceProvider, api: .v2) else {
            throw EnhancedError.invalidCode
        }
        guard session.isLive else { throw EnhancedError.invalidAuthenticationSession }
        return session
    }

    private func mvpdParameter(_ fields: [String: String], serviceProvider: String) throws -> String? {
        guard let mvpd = Self.nonEmpty(fields["mvpd"]) else { return nil }
        try self.checkMVPD(mvpd, serviceProvider: serviceProvider)
        return mvpd
    }

    /// The Base64 value of `AP-Device-Identifier: fingerprint <base64>`; 400 `invalid_header_device_identifier` when
    /// malformed, or when missing and `required`.
    static func deviceIdentifier(_ request: Request, required: Bool) throws -> String? {
        guard let header = request.headers[.apDeviceIdentifier] else {
            if required { throw EnhancedError.invalidDeviceIdentifier }
            return nil
        }
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "fingerprint", let decoded = Base64.decodeLenient(parts[1]), !decoded.isEmpty
        else { throw EnhancedError.invalidDeviceIdentifier }
        return String(parts[1])
    }

    /// The decoded `X-Device-Info`; 400 `invalid_header_device_info` when not Base64, or when missing (unless lenient).
    func deviceInfo(_ request: Request) throws -> DeviceInfo? {
        guard let header = request.headers[.xDeviceInfo] else {
            if self.configuration.lenient { return nil }
            throw EnhancedError.invalidDeviceInfo
        }
        guard let info = DeviceInfo(headerValue: header) else { throw EnhancedError.invalidDeviceInfo }
        return info
    }

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    private static func sessionResponse(_ session: AuthenticationSession) -> SessionResponse {
        let hasMVPD = session.mvpd != nil
        return SessionResponse(
            actionName: hasMVPD ? "authenticate" : "resume",
            actionType: hasMVPD ? "interactive" : "direct",
            reasonType: "none",
            missingParameters: hasMVPD ? nil : session.missingParameters,
            url: hasMVPD
                ? "/api/v2/authenticate/\(session.serviceProvider)/\(session.code)"
                : "/api/v2/\(session.serviceProvider)/sessions/\(session.code)",
            code: session.code,
            sessionId: session.sessionId,
            mvpd: session.mvpd,
            serviceProvider: session.serviceProvider,
            notBefore: String(session.notBefore),
            notAfter: String(session.notAfter)
        )
    }

    private static func authorizeResponse(sp: String, profile: SimulatedProfile) -> SessionResponse {
        SessionResponse(
            actionName: "authorize",
            actionType: "direct",
            reasonType: "authenticated",
            url: "/api/v2/\(sp)/decisions/authorize/\(profile.mvpd)",
            sessionId: profile.sessionId,
            mvpd: profile.mvpd,
            serviceProvider: sp
        )
    }

    /// The pending answer is by far the most frequent response, so it is not re-encoded each time.
    private static func emptyProfiles() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json;charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"profiles":{}}"#))
        )
    }
}
