import Hummingbird
import Logging

/// REST API v2 decisions: `POST /api/v2/{sp}/decisions/authorize/{mvpd}` and `…/preauthorize/{mvpd}` (reference §7.7).
struct V2Decisions: Sendable {
    let routes: V2Routes
    let mediaTokens: MediaTokenIssuer

    private struct RequestBody: Decodable {
        let resources: [String]
    }

    private struct TokenBody: Encodable {
        let notBefore: Int64
        let notAfter: Int64
        let serializedToken: String
    }

    private struct DecisionBody: Encodable {
        let resource: String
        let serviceProvider: String
        let mvpd: String
        var source = "mvpd"
        let authorized: Bool
        var token: TokenBody?
        var notBefore: Int64?
        var notAfter: Int64?
        var error: EnhancedError?
    }

    private struct DecisionsResponse: Encodable {
        let decisions: [DecisionBody]
    }

    /// Class `decisions`, with an access token.
    var apiRoutes: [APIRoute] {
        [
            APIRoute("api/v2/{sp}/decisions/authorize/{mvpd}", .decisions, .v2, [.post: self.authorize]),
            APIRoute("api/v2/{sp}/decisions/preauthorize/{mvpd}", .decisions, .v2, [.post: self.preauthorize]),
        ]
    }

    @Sendable func authorize(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try await self.decide(request, context: context, preauthorization: false)
    }

    @Sendable func preauthorize(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try await self.decide(request, context: context, preauthorization: true)
    }

    /// The profile a decision is made for: the caller's own, else one its valid SSO headers reach (sso.md §3.3). For an
    /// `appleSSO` profile a PFS header that is sent must allow partner SSO for the MVPD (else its 400 error; INFERRED),
    /// and must be sent with ``SimulatorConfiguration/requirePFSForAppleSSODecisions``. Throws ``MissingProfile`` when
    /// there is none.
    private func profile(
        _ request: Request,
        serviceProvider sp: String,
        deviceIdentifier device: String,
        clientId: String,
        mvpd: String
    ) async throws -> SimulatedProfile {
        let state = self.routes.state
        switch state.withLock({ $0.profileState(serviceProvider: sp, deviceIdentifier: device, clientId: clientId, mvpd: mvpd) }) {
        case .valid(let profile):
            if profile.type == .appleSSO,
                request.headers[.partnerFrameworkStatus] != nil || self.routes.configuration.requirePFSForAppleSSODecisions,
                let problem = await self.routes.pfsProblem(request, mvpd: mvpd)
            {
                throw problem.error
            }
            return profile
        case .expired:
            if let sso = await self.ssoProfile(request, serviceProvider: sp, mvpd: mvpd) { return sso }
            throw MissingProfile.expired
        case .absent:
            if let sso = await self.ssoProfile(request, serviceProvider: sp, mvpd: mvpd) { return sso }
            throw MissingProfile.missing
        }
    }

    /// Why a decision has no profile to be made for.
    private enum MissingProfile: Error {
        case missing
        case expired

        var enhancedError: EnhancedError {
            switch self {
            case .missing: .authenticatedProfileMissing
            case .expired: .authenticatedProfileExpired
            }
        }
    }

    private func ssoProfile(_ request: Request, serviceProvider: String, mvpd: String) async -> SimulatedProfile? {
        let subjects = await self.routes.ssoSubjects(request)
        guard !subjects.isEmpty else { return nil }
        let state = self.routes.state
        return state.withLock {
            $0.ssoProfiles(serviceProvider: serviceProvider, subjects: subjects, now: self.routes.configuration.clock.nowMillis)
        }[mvpd]
    }

    private func decide(_ request: Request, context: SimulatorRequestContext, preauthorization: Bool) async throws -> Response {
        let configuration = self.routes.configuration
        let (clientId, sp) = try await self.routes.authorize(request, context: context)
        let device = try V2Routes.deviceIdentifier(request, required: true)!
        _ = try self.routes.deviceInfo(request)
        let mvpd = try await self.routes.mvpdPath(context, serviceProvider: sp)
        guard request.hasJSONContentType || configuration.lenient else {
            throw EnhancedError.unsupportedMediaType(expected: "application/json")
        }
        let body = try await JSONBody.decode(RequestBody.self, from: request, context: context, orThrow: EnhancedError.invalidResources)
        guard !body.resources.isEmpty, body.resources.allSatisfy({ !$0.trimmed.isEmpty }) else {
            throw EnhancedError.invalidResources
        }
        if preauthorization, body.resources.count > configuration.preauthorizeResourceLimit {
            throw EnhancedError.tooManyResources(limit: configuration.preauthorizeResourceLimit)
        }
        let call = DecisionCall(
            request: request,
            context: context,
            clientId: clientId,
            sp: sp,
            mvpd: mvpd,
            device: device,
            resources: body.resources,
            preauthorization: preauthorization,
            now: configuration.clock.nowMillis
        )
        let decisions: [DecisionBody]
        switch self.routes.state.withLock({ $0.entitlementVariant(serviceProvider: sp, mvpd: mvpd) }) {
        case .tempPass(let settings):
            decisions = self.tempPassDecisions(call, settings: settings)
        case .degraded(let rule):
            decisions = self.degradedDecisions(call, rule: rule)
        case .regular:
            decisions = try await self.regularDecisions(call)
        }
        context.logger.info(
            preauthorization ? "preauthorization decided" : "authorization decided",
            metadata: [
                "sp": .string(sp), "mvpd": .string(mvpd), "source": .string(decisions.first?.source ?? "mvpd"),
                "resources": .stringConvertible(decisions.count),
                "denied": .stringConvertible(decisions.filter { !$0.authorized }.count),
            ]
        )
        return try JSONBody.response(.ok, DecisionsResponse(decisions: decisions))
    }

    /// One decisions call, as the three entitlement variants need it.
    private struct DecisionCall {
        let request: Request
        let context: SimulatorRequestContext
        let clientId: String
        let sp: String
        let mvpd: String
        let device: String
        let resources: [String]
        let preauthorization: Bool
        let now: Int64
    }

    /// TempPass: decided by the pass's window and the device's identity, as `source: temppass`.
    private func tempPassDecisions(_ call: DecisionCall, settings: TempPassSettings) -> [DecisionBody] {
        let state = self.routes.state
        let header = call.request.headers[.apTempPassIdentity]
        let outcomes = state.withLock {
            $0.tempPassDecisions(
                serviceProvider: call.sp,
                mvpd: call.mvpd,
                settings: settings,
                device: call.device,
                identity: header.flatMap(TempPassIdentity.init(header:)),
                resources: call.resources,
                authorization: !call.preauthorization
            )
        }
        let userId = SimulatorState.temporaryUserId(device: call.device)
        return zip(call.resources, outcomes).map { resource, outcome in
            self.variantItem(
                resource,
                outcome,
                source: "temppass",
                sp: call.sp,
                mvpd: call.mvpd,
                userId: userId,
                preauthorization: call.preauthorization,
                now: call.now
            )
        }
    }

    private func degradedDecisions(_ call: DecisionCall, rule: DegradationRule) -> [DecisionBody] {
        let configuration = self.routes.configuration
        let state = self.routes.state
        // Degradation answers without the MVPD, and without a profile (Adobe's degraded flows): AuthNAll with the
        // decision's window, AuthZAll without one (Adobe's samples), AuthZNone denies every resource.
        let (userId, sessionId): (String, String) = state.withLock { state in
            if case .valid(let profile) = state.profileState(
                serviceProvider: call.sp,
                deviceIdentifier: call.device,
                clientId: call.clientId,
                mvpd: call.mvpd
            ) {
                return (profile.userId, profile.sessionId)
            }
            guard rule == .authNAll else {
                return (SimulatorState.degradedUserId(serviceProvider: call.sp, mvpd: call.mvpd, device: call.device), "")
            }
            let profile = state.degradedProfile(serviceProvider: call.sp, deviceIdentifier: call.device, clientId: call.clientId, mvpd: call.mvpd)
            return (profile.userId, profile.sessionId)
        }
        let outcome: VariantDecision =
            rule.permits
            ? .permit(notAfter: rule == .authNAll ? call.now + configuration.authorizationTTL.milliseconds : nil) : .deny(.deniedByDegradationRule)
        return call.resources.map { resource in
            self.variantItem(
                resource,
                outcome,
                source: "degradation",
                sp: call.sp,
                mvpd: call.mvpd,
                userId: userId,
                sessionId: sessionId,
                preauthorization: call.preauthorization,
                now: call.now
            )
        }
    }

    /// The MVPD's own decisions for the profile the call names. Without a valid profile: the error as the whole answer,
    /// or on every decision (``SimulatorConfiguration/missingProfileDecision``).
    private func regularDecisions(_ call: DecisionCall) async throws -> [DecisionBody] {
        let configuration = self.routes.configuration
        let state = self.routes.state
        let profile: SimulatedProfile
        do {
            profile = try await self.profile(
                call.request,
                serviceProvider: call.sp,
                deviceIdentifier: call.device,
                clientId: call.clientId,
                mvpd: call.mvpd
            )
        } catch let error as MissingProfile {
            switch configuration.missingProfileDecision {
            case .topLevel:
                throw error.enhancedError
            case .itemLevel:
                return call.resources.map { resource in
                    var item = DecisionBody(resource: resource, serviceProvider: call.sp, mvpd: call.mvpd, authorized: false)
                    item.error = error.enhancedError
                    return item
                }
            }
        }
        // The same address the session recorded, so home-based authentication compares like with like.
        let peerAddress = call.request.clientAddress(context: call.context, trustingForwardedFor: configuration.trustForwardedFor)
        return state.withLock { $0.decide(resources: call.resources, profile: profile, peerAddress: peerAddress) }.map { decision in
            var item = DecisionBody(resource: decision.resource, serviceProvider: call.sp, mvpd: call.mvpd, authorized: decision.isPermitted)
            switch decision.outcome {
            case .permit:
                break
            case .deniedByMVPD(let details):
                item.error = .deniedByMVPD(preauthorization: call.preauthorization, details: details)
                return item
            case .error(let error):
                item.error = error
                return item
            }
            item.notBefore = call.now
            item.notAfter = call.now + configuration.authorizationTTL.milliseconds
            if !call.preauthorization {
                item.token = self.token(
                    sp: call.sp,
                    resource: decision.resource,
                    mvpd: call.mvpd,
                    userId: profile.userId,
                    sessionId: profile.sessionId,
                    now: call.now
                )
            }
            return item
        }
    }

    private func token(sp: String, resource: String, mvpd: String, userId: String, sessionId: String, now: Int64) -> TokenBody {
        let token = self.mediaTokens.issue(
            requestor: sp,
            resource: resource,
            mvpd: mvpd,
            userId: userId,
            sessionId: sessionId,
            now: now,
            ttl: self.routes.configuration.mediaTokenTTL
        )
        return TokenBody(notBefore: token.notBefore, notAfter: token.notAfter, serializedToken: token.serializedToken)
    }

    /// A TempPass or degradation decision: a permit carries a media token (authorize) and, when it has one, the
    /// decision's window; a denial only its error (Adobe's samples).
    private func variantItem(
        _ resource: String,
        _ outcome: VariantDecision,
        source: String,
        sp: String,
        mvpd: String,
        userId: String,
        sessionId: String = "",
        preauthorization: Bool,
        now: Int64
    ) -> DecisionBody {
        switch outcome {
        case .deny(let error):
            var item = DecisionBody(resource: resource, serviceProvider: sp, mvpd: mvpd, source: source, authorized: false)
            item.error = error
            return item
        case .permit(let notAfter):
            var item = DecisionBody(resource: resource, serviceProvider: sp, mvpd: mvpd, source: source, authorized: true)
            if let notAfter {
                item.notBefore = now
                item.notAfter = notAfter
            }
            if !preauthorization {
                item.token = self.token(sp: sp, resource: resource, mvpd: mvpd, userId: userId, sessionId: sessionId, now: now)
            }
            return item
        }
    }
}
