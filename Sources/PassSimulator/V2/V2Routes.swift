import Hummingbird
import Logging

/// REST API v2: configuration, sessions, authenticate and profiles (reference §7).
///
/// Unless lenient: the access token's software statement must cover the path's service provider, the service
/// provider must be configured, a named MVPD must be integrated with it, sessions (create, resume) must be sent as a
/// form, and sessions create, profiles and logout need a decodable `X-Device-Info` (§7.1).
struct V2Routes: Sendable {
    let state: SharedSimulatorState
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

    struct SessionResponse: Encodable {
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
        /// Partner flow only (sso.md §2.4).
        var authenticationRequest: AuthenticationRequest?

        struct AuthenticationRequest: Encodable {
            var type = "saml"
            var request: String
            var attributesNames: [String]
        }
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

    struct ProfilesResponse: Encodable {
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
        var type: ProfileType
        var attributes: [String: Attribute]
        var sessionId: String

        init(_ profile: SimulatedProfile) {
            self.notBefore = profile.notBefore
            self.notAfter = profile.notAfter
            self.issuer = profile.issuer
            self.type = profile.type
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
            var enablePlatformServices: Bool
            var displayInPlatformPicker: Bool
            var enforcePlatformPermissions: Bool
            var platformMappingId: String?
            var boardingStatus: BoardingStatus?
            var requiredMetadataFields: [String]?
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
        let origin = Self.origin(request, configuration: self.configuration)
        let body = ConfigurationResponse(
            device: info?["model"] ?? "unknown",
            os: info?["osName"] ?? "Unknown",
            requestor: .init(
                id: sp,
                name: sp,
                domains: self.configuration.domains(of: sp).map { .init(name: $0) },
                mvpds: self.state.withLock { state in state.mvpdsInForce().map { ($0, state.isTempPass($0.id)) } }.map { mvpd, isTempPass in
                    .init(
                        id: mvpd.id,
                        displayName: mvpd.displayName,
                        logoUrl: mvpd.logoUrl ?? "\(origin)/_sim/logos/\(FormData.encodeComponent(mvpd.id)).svg",
                        isTempPass: isTempPass,
                        authPerAggregator: mvpd.authPerAggregator,
                        enablePlatformServices: mvpd.enablePlatformServices,
                        displayInPlatformPicker: mvpd.displayInPlatformPicker,
                        enforcePlatformPermissions: mvpd.enforcePlatformPermissions,
                        platformMappingId: mvpd.platformMappingId,
                        boardingStatus: mvpd.boardingStatus,
                        requiredMetadataFields: mvpd.requiredMetadataFields.isEmpty ? nil : mvpd.requiredMetadataFields
                    )
                }
            )
        )
        return try JSONBody.response(.ok, body)
    }

    /// A new session (or the profile that makes one unnecessary) from a sessions request's form: REST v2's and the
    /// partner single sign-on route's.
    func startSession(
        _ request: Request,
        context: SimulatorRequestContext,
        serviceProvider: String,
        device: String,
        clientId: String,
        mvpd: String?,
        fields: [String: String],
        deviceInfo: DeviceInfo?,
        ssoSubjects: [SSOSubject] = []
    ) -> SessionCreation {
        self.state.withLock {
            $0.createSession(
                serviceProvider: serviceProvider,
                deviceIdentifier: device,
                clientId: clientId,
                mvpd: mvpd,
                domainName: Self.nonEmpty(fields["domainName"]),
                redirectUrl: Self.nonEmpty(fields["redirectUrl"]),
                deviceInfo: deviceInfo,
                userAgent: request.headers[.userAgent],
                peerAddress: request.clientAddress(context: context, trustingForwardedFor: self.configuration.trustForwardedFor),
                earlyExpiryOffset: self.faults.earlyExpiryOffset(ttlMillis: self.configuration.codeTTL.milliseconds),
                ssoSubjects: ssoSubjects
            )
        }
    }

    @Sendable func createSession(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        let info = try self.deviceInfo(request)
        try self.requireForm(request)
        let fields = try await FormData.fields(of: request, context: context)
        let mvpd = try await self.mvpdParameter(fields, serviceProvider: sp)
        try self.checkDomainAndRedirect(fields, serviceProvider: sp)
        if let mvpd,
            let answer = try self.variantSession(request, serviceProvider: sp, device: device, clientId: clientId, mvpd: mvpd, context: context)
        {
            return answer
        }
        let subjects = await self.ssoSubjects(request)
        let creation = self.startSession(
            request,
            context: context,
            serviceProvider: sp,
            device: device,
            clientId: clientId,
            mvpd: mvpd,
            fields: fields,
            deviceInfo: info,
            ssoSubjects: subjects
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
        case .authenticatedSSO(let profile):
            context.logger.info(
                "session answered with an SSO profile",
                metadata: ["sp": .string(sp), "mvpd": .string(profile.mvpd), "profile.type": .string(profile.type.rawValue)]
            )
            return try JSONBody.response(.ok, Self.authorizeResponse(sp: sp, profile: profile, reasonType: "authenticatedSSO"))
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
        let mvpd = try await self.mvpdParameter(fields, serviceProvider: sp)
        try self.checkDomainAndRedirect(fields, serviceProvider: sp)
        guard
            let session = self.state.withLock({
                $0.resumeSession(
                    code: code,
                    serviceProvider: sp,
                    api: .v2,
                    mvpd: mvpd,
                    domainName: Self.nonEmpty(fields["domainName"]),
                    redirectUrl: Self.nonEmpty(fields["redirectUrl"])
                )
            })
        else { throw EnhancedError.invalidCode }
        if case .pending = session.status, let mvpd = session.mvpd,
            let answer = try self.variantSession(
                request,
                serviceProvider: sp,
                device: session.deviceIdentifier,
                clientId: session.clientId,
                mvpd: mvpd,
                context: context
            )
        {
            return answer
        }
        switch session.status {
        case .expired, .superseded:
            throw EnhancedError.invalidAuthenticationSession
        case .completed(let profile):
            return try JSONBody.response(.ok, Self.authorizeResponse(sp: sp, profile: profile))
        case .pending:
            var body = Self.sessionResponse(session)
            if !session.missingParameters.isEmpty {
                // A resume that still lacks a parameter is answered with `retry`, not `resume` (reference §7.3).
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
        guard let session = self.state.withLock({ $0.session(code: code, serviceProvider: sp, api: .v2) }) else {
            throw HTMLError(status: .badRequest, title: "Unknown code", message: "The code \(code) was not found. Check it on your TV.")
        }
        return try ActivationPages.secondScreenResponse(for: session, configuration: self.configuration)
    }

    @Sendable func getProfiles(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        var profiles = await self.visibleProfiles(request, serviceProvider: sp, deviceIdentifier: device, clientId: clientId)
        let identity = request.headers[.apTempPassIdentity].flatMap(TempPassIdentity.init(header:))
        profiles.merge(self.state.withLock { $0.tempPassProfiles(serviceProvider: sp, device: device, identity: identity) }) { own, _ in own }
        return try JSONBody.response(.ok, ProfilesResponse(profiles: profiles.mapValues(ProfileBody.init)))
    }

    @Sendable func getProfilesForMVPD(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        let mvpd = try await self.mvpdPath(context, serviceProvider: sp)
        let variant = self.state.withLock { $0.entitlementVariant(serviceProvider: sp, mvpd: mvpd) }
        if case .tempPass(let settings) = variant {
            let identity = request.headers[.apTempPassIdentity].flatMap(TempPassIdentity.init(header:))
            if settings.promotional, identity == nil { throw EnhancedError.invalidTempPassIdentity }
            let profile = try self.state.withLock { (state) throws(EnhancedError) in
                try state.tempPassProfile(serviceProvider: sp, mvpd: mvpd, settings: settings, device: device, identity: identity)
            }
            return try JSONBody.response(.ok, ProfilesResponse(profiles: [mvpd: ProfileBody(profile)]))
        }
        var profiles = await self.visibleProfiles(request, serviceProvider: sp, deviceIdentifier: device, clientId: clientId).filter {
            $0.key == mvpd
        }
        if profiles.isEmpty, variant == .degraded(.authNAll) {
            // AuthNAll: a device without a valid profile is given a degraded one (Adobe's degraded flows).
            profiles[mvpd] = self.state.withLock {
                $0.degradedProfile(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd)
            }
        }
        return try JSONBody.response(.ok, ProfilesResponse(profiles: profiles.mapValues(ProfileBody.init)))
    }

    /// The caller's own profiles plus those its valid SSO headers reach. An `appleSSO` profile is hidden when the
    /// request carries a PFS header that does not allow partner SSO for its MVPD (INFERRED, sso.md §3.3); without the
    /// header it is shown (FAQ 10: later queries use the basic endpoints).
    private func visibleProfiles(
        _ request: Request,
        serviceProvider: String,
        deviceIdentifier: String,
        clientId: String
    ) async -> [String: SimulatedProfile] {
        let subjects = await self.ssoSubjects(request)
        var profiles = self.state.withLock {
            $0.profilesWithSSO(
                serviceProvider: serviceProvider,
                deviceIdentifier: deviceIdentifier,
                clientId: clientId,
                subjects: subjects
            )
        }
        if request.headers[.partnerFrameworkStatus] != nil {
            for (mvpd, profile) in profiles where profile.type == .appleSSO {
                if await self.pfsProblem(request, mvpd: mvpd) != nil { profiles[mvpd] = nil }
            }
        }
        return profiles
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

    /// Drops the device's profile for the MVPD (reference §7.8) and answers the next step, as Adobe's logout API page
    /// lists the `actionName` values
    /// (https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/rest-apis/rest-api-v2/rest-api-v2-apis/rest-api-v2-logout-apis/rest-api-v2-logout-apis-initiate-logout-for-specific-mvpd):
    /// `logout` with the simulated MVPD's logout page as `url` (it returns to `redirectUrl`) when a valid profile was
    /// dropped; `partner_logout`/`partner_interactive` without `url` for an `appleSSO` profile (the user signs out in
    /// the system settings); `complete` during degraded or temporary access (samples 6 and 7); `invalid` when no valid
    /// profile is found ("log out of MVPD when no valid profile is found").
    ///
    /// SSO (sso.md §2.5): with valid SSO headers it is a single logout: the subjects' links to the MVPD go too, and the
    /// answer's `url` is the relative one of Adobe's SSO samples.
    @Sendable func logout(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.authorize(request, context: context)
        let device = try Self.deviceIdentifier(request, required: true)!
        _ = try self.deviceInfo(request)
        let mvpd = try await self.mvpdPath(context, serviceProvider: sp)
        let redirectUrl = request.uri.query.flatMap { FormData.parse($0)["redirectUrl"] }.flatMap(Self.nonEmpty)
        let subjects = await self.ssoSubjects(request)
        let (outcome, variant, now) = self.state.withLock {
            (
                $0.logout(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd, subjects: subjects),
                $0.entitlementVariant(serviceProvider: sp, mvpd: mvpd),
                $0.now
            )
        }
        let valid = outcome.removedProfile.map { now < $0.notAfter } ?? false
        let action: LogoutAction
        if valid, outcome.removedProfile?.type == .appleSSO {
            action = .partnerLogout
        } else if variant != .regular || outcome.removedProfile?.type == .degraded {
            // Degraded and temporary access have no MVPD session to end.
            action = .complete
        } else if !subjects.isEmpty && (valid || outcome.removedLinks > 0) {
            action = .logout(url: "/adobe-services/logout?" + FormData.query(["requestor_id": sp, "mso_id": mvpd, "pt_device_id": device]))
        } else if valid {
            var query: KeyValuePairs<String, String> = ["noflash": "true", "mso_id": mvpd, "requestor_id": sp]
            if let redirectUrl {
                query = ["noflash": "true", "mso_id": mvpd, "requestor_id": sp, "redirect_url": redirectUrl]
            }
            action = .logout(url: Self.origin(request, configuration: self.configuration) + "/adobe-services/logout?" + FormData.query(query))
        } else {
            action = .invalid
        }
        context.logger.info(
            "logout",
            metadata: [
                "sp": .string(sp), "mvpd": .string(mvpd), "profile.removed": .stringConvertible(outcome.removedProfile != nil),
                "sso.links.removed": .stringConvertible(outcome.removedLinks), "logout.action": .string(action.name),
            ]
        )
        return try JSONBody.response(.ok, ["logouts": [mvpd: action.entry(mvpd: mvpd)]])
    }

    /// `http://<Host>` of the request (`https://` when the simulator serves TLS), for the absolute URLs Adobe publishes.
    static func origin(_ request: Request, configuration: SimulatorConfiguration) -> String {
        let scheme = configuration.tls == nil ? "http" : "https"
        return request.head.authority.map { "\(scheme)://\($0)" } ?? ""
    }

    /// `authenticate` once the session holds `mvpd`, `domainName` and `redirectUrl`; until then `resume` with the
    /// missing ones, as Adobe answers a request that lacks some (create-authentication-session sample 2).
    static func sessionResponse(_ session: AuthenticationSession) -> SessionResponse {
        let missing = session.missingParameters
        let complete = missing.isEmpty
        return SessionResponse(
            actionName: complete ? "authenticate" : "resume",
            actionType: complete ? "interactive" : "direct",
            reasonType: "none",
            missingParameters: complete ? nil : missing,
            url: complete
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

    static func authorizeResponse(sp: String, profile: SimulatedProfile, reasonType: String = "authenticated") -> SessionResponse {
        SessionResponse(
            actionName: "authorize",
            actionType: "direct",
            reasonType: reasonType,
            url: "/api/v2/\(sp)/decisions/authorize/\(profile.mvpd)",
            sessionId: profile.sessionId,
            mvpd: profile.mvpd,
            serviceProvider: sp
        )
    }

    /// The answer of a sessions request for a TempPass MVPD (`authorize`/`temporary`: no login, the device's trial
    /// starts) or for an integration under AuthNAll without a valid profile (`authorize`/`degraded`, a degraded
    /// profile); `nil` when the basic flow applies.
    func variantSession(
        _ request: Request,
        serviceProvider sp: String,
        device: String,
        clientId: String,
        mvpd: String,
        context: SimulatorRequestContext
    ) throws -> Response? {
        // A promotional identity sent with the session joins the device's trial (Adobe's identification table).
        let identity = request.headers[.apTempPassIdentity].flatMap(TempPassIdentity.init(header:))
        let answer: (profile: SimulatedProfile, reason: String)? = self.state.withLock { state in
            switch state.entitlementVariant(serviceProvider: sp, mvpd: mvpd) {
            case .tempPass(let settings):
                let (_, trial) = state.tempPassTrial(serviceProvider: sp, mvpd: mvpd, settings: settings, device: device, identity: identity)
                return (SimulatorState.temporaryProfile(trial, settings: settings), "temporary")
            case .degraded(.authNAll):
                if case .valid = state.profileState(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd) { return nil }
                return (state.degradedProfile(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd), "degraded")
            default:
                return nil
            }
        }
        guard let answer else { return nil }
        context.logger.info(
            "session answered without a login",
            metadata: ["sp": .string(sp), "mvpd": .string(mvpd), "reason": .string(answer.reason)]
        )
        return try JSONBody.response(.ok, Self.authorizeResponse(sp: sp, profile: answer.profile, reasonType: answer.reason))
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
