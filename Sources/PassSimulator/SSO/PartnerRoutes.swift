import Hummingbird
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// REST v2 partner (Apple) single sign-on: `POST /api/v2/{sp}/sessions/sso/{partner}` and
/// `POST /api/v2/{sp}/profiles/sso/{partner}` (sso.md §2.4, §3.3).
///
/// Neither request carries an MVPD (`[API-SSOREQ]`, `[API-SSOPROF]`, the OAS): `sessions/sso` takes it from
/// `AP-Partner-Framework-Status` (the MVPD whose `platformMappingId` is the provider id), `profiles/sso` from the
/// partner request the SAML answers. An `mvpd` form field is not Adobe's and is ignored.
///
/// Basic validation (token, service provider, partner, headers, form, the PFS provider's MVPD and integration) fails
/// with an enhanced error, as for basic sessions. Partner validation falls back to the basic flow on `sessions/sso`,
/// checked in this order: no provider that maps to an MVPD → `pfs_fallback` (a code without an MVPD); the integration
/// or MVPD not set up for the device's Apple platform → `configuration_fallback`; PFS header otherwise not allowing
/// partner SSO → `pfs_fallback`; `domainName`/`redirectUrl` missing → `missing_parameters_fallback` (resume). On
/// `profiles/sso` a bad PFS header is an error.
struct PartnerRoutes: Sendable {
    let routes: V2Routes

    /// The only partner Adobe documents.
    static let apple = "Apple"

    var apiRoutes: [APIRoute] {
        [
            APIRoute("api/v2/{sp}/sessions/sso/{partner}", .sessions, .v2, [.post: self.createPartnerSession]),
            APIRoute("api/v2/{sp}/profiles/sso/{partner}", .other, .v2, [.post: self.createPartnerProfile]),
        ]
    }

    private var state: SharedSimulatorState { self.routes.state }

    private func partner(_ context: SimulatorRequestContext) throws -> String {
        guard let partner = context.parameters.get("partner"), partner == Self.apple else { throw EnhancedError.invalidPartner }
        return partner
    }

    @Sendable func createPartnerSession(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.routes.authorize(request, context: context)
        let partner = try self.partner(context)
        let device = try V2Routes.deviceIdentifier(request, required: true)!
        let info = try self.routes.deviceInfo(request)
        try self.routes.requireForm(request)
        let fields = try await FormData.fields(of: request, context: context)
        // Basic validation answers with an enhanced error, as for `sessions`; only partner validation falls back.
        try self.routes.checkDomainAndRedirect(fields, serviceProvider: sp)
        guard let mvpd = self.routes.pfsMVPD(request) else {
            // No provider to take the MVPD from (Adobe's sample: `denied` with an empty provider): the basic flow.
            let problem = await self.routes.pfsProblem(request, mvpd: nil)
            return try self.fallback(
                "pfs_fallback",
                request,
                context: context,
                sp: sp,
                device: device,
                clientId: clientId,
                mvpd: nil,
                fields: fields,
                info: info,
                log: ["sp": .string(sp), "partner": .string(partner), "pfs.problem": .string(problem?.rawValue ?? "none")]
            )
        }
        try await self.routes.checkMVPD(mvpd, serviceProvider: sp)
        let settings = self.state.withLock { $0.integrationSettings(serviceProvider: sp, mvpd: mvpd) }
        var log: Logger.Metadata = ["sp": .string(sp), "mvpd": .string(mvpd), "partner": .string(partner)]

        if settings.degraded {
            context.logger.info("partner session: degraded MVPD", metadata: log)
            return try Self.degradedSession(sp: sp, mvpd: mvpd)
        }
        if let profile = self.state.withLock({ $0.profiles(serviceProvider: sp, deviceIdentifier: device, clientId: clientId) })[mvpd] {
            // INFERRED split (sso.md §3.3): the partner's own profile is `authenticatedSSO`, any other `authenticated`.
            let reason = profile.type == .appleSSO ? "authenticatedSSO" : "authenticated"
            context.logger.info("partner session answered with existing profile", metadata: log)
            return try JSONBody.response(.ok, V2Routes.authorizeResponse(sp: sp, profile: profile, reasonType: reason))
        }

        let platform = self.state.withLock { $0.platform(ofMVPD: mvpd) } ?? MVPDPlatform()
        let fallback = await self.fallbackReason(request, mvpd: mvpd, platform: platform, settings: settings, info: info, fields: fields, log: &log)
        if let fallback {
            return try self.fallback(
                fallback,
                request,
                context: context,
                sp: sp,
                device: device,
                clientId: clientId,
                mvpd: mvpd,
                fields: fields,
                info: info,
                log: log
            )
        }

        let body = self.partnerProfileSession(sp: sp, mvpd: mvpd, partner: partner, device: device, clientId: clientId, platform: platform)
        context.logger.info("partner authentication request issued", metadata: log)
        return try JSONBody.response(.ok, body)
    }

    /// Adobe's answer for a degraded MVPD: straight to authorization, without a profile.
    private static func degradedSession(sp: String, mvpd: String) throws -> Response {
        let body = V2Routes.SessionResponse(
            actionName: "authorize",
            actionType: "direct",
            reasonType: "degraded",
            url: "/api/v2/\(sp)/decisions/authorize/\(mvpd)",
            sessionId: UUID().uuidString.lowercased(),
            mvpd: mvpd,
            serviceProvider: sp
        )
        return try JSONBody.response(.ok, body)
    }

    /// Why the partner flow falls back to a basic session (`nil`: it does not): the MVPD or the platform does not
    /// allow it, the partner framework status has a problem, or the basic parameters are missing.
    private func fallbackReason(
        _ request: Request,
        mvpd: String,
        platform: MVPDPlatform,
        settings: IntegrationSettings,
        info: DeviceInfo?,
        fields: [String: String],
        log: inout Logger.Metadata
    ) async -> String? {
        if !platform.supportsPartnerSSO || !settings.allowsApple(on: ApplePlatform(osName: info?["osName"])) {
            return "configuration_fallback"
        }
        if let problem = await self.routes.pfsProblem(request, mvpd: mvpd) {
            log["pfs.problem"] = .string(problem.rawValue)
            return "pfs_fallback"
        }
        if V2Routes.nonEmpty(fields["domainName"]) == nil || V2Routes.nonEmpty(fields["redirectUrl"]) == nil {
            return "missing_parameters_fallback"
        }
        return nil
    }

    /// `partner_profile` with the SAML authentication request the partner's identity provider answers.
    private func partnerProfileSession(
        sp: String,
        mvpd: String,
        partner: String,
        device: String,
        clientId: String,
        platform: MVPDPlatform
    ) -> V2Routes.SessionResponse {
        let partnerRequest = self.state.withLock {
            $0.openPartnerRequest(serviceProvider: sp, mvpd: mvpd, deviceIdentifier: device, clientId: clientId)
        }
        var body = V2Routes.SessionResponse(
            actionName: "partner_profile",
            actionType: "direct",
            reasonType: "none",
            url: "/api/v2/\(sp)/profiles/sso/\(partner)",
            sessionId: partnerRequest.sessionId,
            mvpd: mvpd,
            serviceProvider: sp
        )
        body.authenticationRequest = .init(
            request: SAMLMessages.authnRequest(
                id: partnerRequest.id,
                serviceProvider: sp,
                mvpd: mvpd,
                attributesNames: platform.attributesNames,
                now: partnerRequest.notBefore
            ),
            attributesNames: platform.attributesNames
        )
        return body
    }

    /// A basic session instead of the partner flow, answered as `authenticate` (or `resume` when parameters are
    /// missing) with `reasonType` `reason`.
    private func fallback(
        _ reason: String,
        _ request: Request,
        context: SimulatorRequestContext,
        sp: String,
        device: String,
        clientId: String,
        mvpd: String?,
        fields: [String: String],
        info: DeviceInfo?,
        log: Logger.Metadata
    ) throws -> Response {
        let creation = self.routes.startSession(
            request,
            context: context,
            serviceProvider: sp,
            device: device,
            clientId: clientId,
            mvpd: mvpd,
            fields: fields,
            deviceInfo: info
        )
        guard case .created(let session) = creation else {
            // Unreachable: the device has no profile for the MVPD (checked before) and partner sessions carry no SSO
            // subjects.
            throw HTTPError(.internalServerError)
        }
        var body = V2Routes.sessionResponse(session)
        body.reasonType = reason
        if !session.missingParameters.isEmpty {
            body.actionName = "resume"
            body.actionType = "direct"
            body.missingParameters = session.missingParameters
            body.url = "/api/v2/\(sp)/sessions/\(session.code)"
        }
        var log = log
        log["code"] = .string(session.code)
        log["reason"] = .string(reason)
        context.logger.info("partner session fell back to the basic flow", metadata: log)
        return try JSONBody.response(.ok, body)
    }

    @Sendable func createPartnerProfile(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (clientId, sp) = try await self.routes.authorize(request, context: context)
        _ = try self.partner(context)
        let device = try V2Routes.deviceIdentifier(request, required: true)!
        _ = try self.routes.deviceInfo(request)
        try self.routes.requireForm(request)
        let fields = try await FormData.fields(of: request, context: context)
        let samlResponse = V2Routes.nonEmpty(fields["SAMLResponse"])
        // The MVPD the PFS provider must match: the one of the partner request the answer is for.
        let mvpd = samlResponse.flatMap { saml in self.state.withLock { $0.unverifiedPartnerMVPD(saml) } }
        if let problem = await self.routes.pfsProblem(request, mvpd: mvpd) {
            context.logger.info("partner profile refused: PFS", metadata: ["sp": .string(sp), "pfs.problem": .string(problem.rawValue)])
            throw problem.error
        }
        guard let samlResponse,
            let answer = self.state.withLock({
                $0.verifiedPartnerAnswer(samlResponse, serviceProvider: sp, deviceIdentifier: device, clientId: clientId)
            })
        else {
            context.logger.info("partner profile refused: SAMLResponse", metadata: ["sp": .string(sp)])
            throw EnhancedError.invalidSAMLResponse
        }
        if answer.trust == .acceptedUnsigned {
            context.logger.warning(
                "partner profile: SAML answer not signed by a trusted identity provider, accepted (--accept-unsigned-saml)",
                metadata: ["sp": .string(sp), "mvpd": .string(answer.request.mvpd)]
            )
        }
        try await self.routes.checkMVPD(answer.request.mvpd, serviceProvider: sp)
        let degraded = self.state.withLock { $0.integrationSettings(serviceProvider: sp, mvpd: answer.request.mvpd) }.degraded
        let profile = self.state.withLock { $0.storePartnerProfile(request: answer.request, assertion: answer.assertion, degraded: degraded) }
        context.logger.info(
            "partner profile created",
            metadata: ["sp": .string(sp), "mvpd": .string(profile.mvpd), "profile.type": .string(profile.type.rawValue)]
        )
        return try JSONBody.response(
            degraded ? .ok : .created,
            V2Routes.ProfilesResponse(profiles: [profile.mvpd: V2Routes.ProfileBody(profile)])
        )
    }
}
