import Hummingbird
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Test and lab hooks for single sign-on under `/_sim`: the platform identity and service token issuers, runtime MVPD
/// platform fields and integration settings, a view of the SSO state, and the SSO Service's devices and pending link
/// codes (what a lab types on a second device).
struct SSOAdminRoutes: Sendable {
    let state: SharedSimulatorState

    /// Default lifetime of issued identity tokens.
    static let defaultTokenTTL: Int64 = 3600

    private struct PlatformTokenRequest: Decodable {
        let sub: String
        let did: String?
        let ttl: Int64?
    }

    private struct ServiceTokenRequest: Decodable {
        let iss: String?
        let sub: String
        let ttl: Int64?
    }

    private struct IntegrationBody: Encodable {
        let serviceProvider: String
        let mvpd: String
        let settings: IntegrationSettings

        func encode(to encoder: any Encoder) throws {
            try self.settings.encode(to: encoder)
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(self.serviceProvider, forKey: AnyCodingKey("serviceProvider"))
            try container.encode(self.mvpd, forKey: AnyCodingKey("mvpd"))
        }
    }

    private struct ConfigBody: Encodable {
        let v2ProfileScope: V2ProfileScope
        /// Whether the profile scope is Adobe's.
        let v2ProfileScopeFaithful: Bool
        let requirePFSForAppleSSODecisions: Bool
        let identityIssuers: [String]
        /// MVPDs whose SAML identity provider key is configured (`*` for the default key), and whether unsigned answers pass.
        let samlIdentityProviders: [String]
        let acceptUnsignedSAML: Bool
        let ssoService: SSOServiceSettings
        let missingProfileDecision: MissingProfileDecision
    }

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("identity/platform-token", [.post: self.platformToken])
        routes.endpoint("identity/service-token", [.post: self.serviceToken])
        routes.endpoint("identity/service-key", [.get: self.serviceKey])
        routes.endpoint("mvpds/{mvpd}", [.get: self.getMVPD, .put: self.putMVPD])
        routes.endpoint("integrations/{sp}/{mvpd}", [.get: self.getIntegration, .put: self.putIntegration])
        routes.endpoint("sso", [.get: self.getSSO])
        routes.endpoint("sso/service", [.get: self.getSSOService])
        routes.endpoint("config", [.get: self.getConfig])
    }

    private static func invalid(_ message: String) -> AdminRoutes.AdminError {
        AdminRoutes.AdminError(status: .badRequest, error: "invalid_request", message: message)
    }

    /// `POST /_sim/identity/platform-token {"sub", "did"?, "ttl"?}` → `{"token": <HS256 JWS>}`.
    @Sendable func platformToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            PlatformTokenRequest.self,
            from: request,
            context: context,
            orThrow: Self.invalid(#"Expected JSON {"sub": "…", "did"?: "…", "ttl"?: seconds}."#)
        )
        guard !body.sub.isEmpty else { throw Self.invalid("sub must not be empty.") }
        let ttl = body.ttl ?? Self.defaultTokenTTL
        let token = try self.state.withLock { try $0.issuePlatformToken(subject: body.sub, deviceId: body.did, ttlSeconds: ttl) }
        return try JSONBody.response(.ok, ["token": token])
    }

    /// `POST /_sim/identity/service-token {"iss"?, "sub", "ttl"?}` → `{"token": <RS256 JWS>}`.
    @Sendable func serviceToken(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            ServiceTokenRequest.self,
            from: request,
            context: context,
            orThrow: Self.invalid(#"Expected JSON {"iss"?: "…", "sub": "…", "ttl"?: seconds}."#)
        )
        guard !body.sub.isEmpty else { throw Self.invalid("sub must not be empty.") }
        let issuer = body.iss.flatMap { $0.isEmpty ? nil : $0 } ?? SimulatorState.serviceIssuer
        let ttl = body.ttl ?? Self.defaultTokenTTL
        let token = try self.state.withLock { try $0.issueServiceToken(issuer: issuer, subject: body.sub, ttlSeconds: ttl) }
        return try JSONBody.response(.ok, ["token": token])
    }

    /// `GET /_sim/identity/service-key` → `{"alg": "RS256", "pem": <public key>}`: what an identity service hands Adobe.
    @Sendable func serviceKey(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, ["alg": "RS256", "pem": try self.state.withLock { try $0.serviceTokenPublicKey() }])
    }

    @Sendable func getMVPD(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let id = try context.parameters.require("mvpd")
        guard let mvpd = self.state.withLock({ $0.mvpdsInForce() }).first(where: { $0.id == id }) else { throw Self.unknownMVPD(id) }
        return try JSONBody.response(.ok, mvpd)
    }

    /// `PUT /_sim/mvpds/{mvpd}` with the platform fields (missing ones take their defaults) replaces them.
    @Sendable func putMVPD(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let id = try context.parameters.require("mvpd")
        let platform = try await JSONBody.decode(
            MVPDPlatform.self,
            from: request,
            context: context,
            orThrow: Self.invalid(
                #"Expected JSON {"platformMappingId"?, "boardingStatus"?: "SUPPORTED"|"PICKER", "enablePlatformServices"?, "displayInPlatformPicker"?, "enforcePlatformPermissions"?, "requiredMetadataFields"?}."#
            )
        )
        guard self.state.withLock({ $0.setPlatform(platform, ofMVPD: id) }) else { throw Self.unknownMVPD(id) }
        context.logger.info("MVPD platform fields replaced", metadata: ["mvpd": .string(id)])
        return try await self.getMVPD(request, context: context)
    }

    @Sendable func getIntegration(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (sp, mvpd) = try self.integration(context)
        let settings = self.state.withLock { $0.integrationSettings(serviceProvider: sp, mvpd: mvpd) }
        return try JSONBody.response(.ok, IntegrationBody(serviceProvider: sp, mvpd: mvpd, settings: settings))
    }

    /// `PUT /_sim/integrations/{sp}/{mvpd}` with the settings (missing ones take their defaults) replaces them. It
    /// does not integrate a pair the configuration does not integrate.
    @Sendable func putIntegration(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let (sp, mvpd) = try self.integration(context)
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let settings: IntegrationSettings
        do {
            // Foundation's coder stays: a `Codable` type, and its `DecodingError` path is the error text admins see.
            settings = try JSONDecoder().decode(IntegrationSettings.self, from: Data(buffer: buffer))
        } catch {
            throw Self.invalid(
                #"Expected JSON {"enabled"?, "degraded"?, "authPerRequestor"?, "ssoDisabled"?, "sso"?: {"appleIos"?, "appleTvos"?, "platform"?, "serviceToken"?}, "ttl"?: seconds}: \#(AdminRoutes.describe(error))"#
            )
        }
        _ = self.state.withLock { $0.setIntegrationSettings(settings, serviceProvider: sp, mvpd: mvpd) }
        context.logger.info("integration settings replaced", metadata: ["sp": .string(sp), "mvpd": .string(mvpd)])
        return try JSONBody.response(.ok, IntegrationBody(serviceProvider: sp, mvpd: mvpd, settings: settings))
    }

    /// `GET /_sim/sso`: stored profiles by type, subject links, open partner requests.
    @Sendable func getSSO(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, self.state.withLock { $0.ssoSnapshot() })
    }

    /// `GET /_sim/sso/service`: the SSO Service's enrolled devices by common identifier and its pending link codes.
    @Sendable func getSSOService(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, self.state.withLock { $0.ssoServiceSnapshot() })
    }

    /// `GET /_sim/config`: the behaviour switches a lab may want to confirm (non-faithful ones flagged).
    @Sendable func getConfig(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let configuration = self.state.configuration
        return try JSONBody.response(
            .ok,
            ConfigBody(
                v2ProfileScope: configuration.v2ProfileScope,
                v2ProfileScopeFaithful: configuration.v2ProfileScope == .deviceAndClient,
                requirePFSForAppleSSODecisions: configuration.requirePFSForAppleSSODecisions,
                identityIssuers: configuration.identityIssuers.keys.sorted(),
                samlIdentityProviders: (configuration.samlTrust.defaultKeyPEM == nil ? [] : ["*"])
                    + configuration.samlTrust.keyPEMByMVPD.keys.sorted(),
                acceptUnsignedSAML: configuration.samlTrust.acceptUnsigned,
                ssoService: configuration.ssoService,
                missingProfileDecision: configuration.missingProfileDecision
            )
        )
    }

    private func integration(_ context: SimulatorRequestContext) throws -> (String, String) {
        let sp = try context.parameters.require("sp")
        let mvpd = try context.parameters.require("mvpd")
        guard self.state.configuration.accepts(serviceProvider: sp) else {
            throw AdminRoutes.AdminError(status: .notFound, error: "unknown_service_provider", message: "The service provider \(sp) is not known.")
        }
        guard self.state.configuration.mvpd(id: mvpd) != nil else { throw Self.unknownMVPD(mvpd) }
        return (sp, mvpd)
    }

    private static func unknownMVPD(_ mvpd: String) -> AdminRoutes.AdminError {
        AdminRoutes.AdminError(status: .notFound, error: "unknown_mvpd", message: "The MVPD \"\(mvpd)\" is not configured.")
    }
}
