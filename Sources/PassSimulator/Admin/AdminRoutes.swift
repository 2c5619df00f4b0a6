import Hummingbird
import ListenerGuard
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Test hooks under `/_sim`: complete, expire or script a code as if on a second screen, expire a client's access
/// tokens, issue software statements, list live codes, edit the deny lists and fault injection, read counters.
///
/// Errors use a small JSON body `{"error": "<code>", "message": "…"}`; they are for test harnesses, not devices.
struct AdminRoutes: Sendable {
    let state: SharedSimulatorState
    let faults: FaultInjector
    let connections: ConnectionCounters
    /// The listener's cap and counts, when the routes serve a listener that has one.
    var listener: ListenerCounters? = nil

    private struct ApproveRequest: Decodable {
        let code: String
        let mvpd: String?
        let userId: String?
        let attributes: [String: MetadataValue]?
    }

    private struct CodeRequest: Decodable {
        let code: String
    }

    private struct StatementRequest: Decodable {
        let software_id: String
        let redirect_uris: [String]?
    }

    private struct ClientRequest: Decodable {
        let clientId: String
    }

    private struct ExpiredTokens: Encodable {
        let clientId: String
        let revoked: Int
    }

    private struct ApproveResponse: Encodable {
        let code: String
        let api: CodeAPI
        let serviceProvider: String
        let deviceIdentifier: String
        let mvpd: String
        let userId: String
        let householdId: String
        let sessionId: String
        let notBefore: Int64
        let notAfter: Int64
        let attributes: [String: V2Routes.ProfileBody.Attribute]
    }

    private struct CodeSummary: Encodable {
        let code: String
        let api: CodeAPI
        let serviceProvider: String
        let deviceIdentifier: String
        let clientId: String
        let mvpd: String?
        let status: String
        let notBefore: Int64
        let notAfter: Int64
        let script: CodeScript?
    }

    private struct ScriptResponse: Encodable {
        let code: String
        let status: String
        let script: CodeScript
    }

    private struct CodesResponse: Encodable {
        let codes: [CodeSummary]
    }

    struct AdminError: Error, HTTPResponseError {
        let status: HTTPResponse.Status
        let error: String
        let message: String

        func response(from request: Request, context: some RequestContext) throws -> Response {
            try JSONBody.response(self.status, ["error": self.error, "message": self.message])
        }
    }

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("approve", [.post: self.approve])
        routes.endpoint("expire", [.post: self.expire])
        routes.endpoint("expire-tokens", [.post: self.expireTokens])
        routes.endpoint("statements", [.post: self.issueStatement])
        routes.endpoint("codes", [.get: self.codes])
        routes.endpoint("codes/{code}/script", [.put: self.script])
        routes.endpoint("deny", [.get: self.getDeny, .put: self.putDeny])
        routes.endpoint("faults", [.get: self.getFaults, .put: self.putFaults])
        routes.endpoint("stats", [.get: self.getStats, .delete: self.resetStats])
    }

    /// Issues a software statement signed with the simulator's key, as the TVE Dashboard does for a registered
    /// application: `{"software_id": "…", "redirect_uris"?: ["…"]}` → 201 `{"software_statement": "<jwt>"}`.
    @Sendable func issueStatement(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            StatementRequest.self,
            from: request,
            context: context,
            orThrow: AdminError(
                status: .badRequest,
                error: "invalid_request",
                message: #"Expected JSON {"software_id": "…", "redirect_uris"?: ["…"]}."#
            )
        )
        let key = self.state.withLock { $0.configuration.statementKey }
        let statement: String
        do {
            statement = try key.issue(softwareId: body.software_id, redirectURIs: body.redirect_uris ?? [])
        } catch {
            throw AdminError(status: .badRequest, error: "invalid_request", message: error.description)
        }
        context.logger.info("software statement issued", metadata: ["dcr.software_id": .string(body.software_id)])
        return try JSONBody.response(.created, ["software_statement": statement])
    }

    @Sendable func approve(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            ApproveRequest.self,
            from: request,
            context: context,
            orThrow: AdminError(
                status: .badRequest,
                error: "invalid_request",
                message: #"Expected JSON {"code": "…", "mvpd"?: "…", "userId"?: "…", "attributes"?: {…}}."#
            )
        )
        if OAuthDeviceAuthority.isUserCode(body.code) {
            return try OAuthAdminRoutes(state: self.state).decide(userCode: body.code, approve: true, subject: body.userId, context: context)
        }
        let profile: SimulatedProfile
        do {
            profile = try self.state.withLock { (state) throws(CodeCompletionError) in
                try state.completeCode(body.code, mvpd: body.mvpd, userId: body.userId, attributes: body.attributes)
            }
        } catch {
            throw Self.adminError(error, code: body.code)
        }
        guard let session = self.state.withLock({ $0.session(code: body.code) }) else {
            throw AdminError(status: .notFound, error: "unknown_code", message: "No code \(body.code.uppercased()) was issued.")
        }
        context.logger.info(
            "code approved",
            metadata: ["code": .string(session.code), "mvpd": .string(profile.mvpd), "sp": .string(session.serviceProvider)]
        )
        return try JSONBody.response(
            .ok,
            ApproveResponse(
                code: session.code,
                api: session.api,
                serviceProvider: session.serviceProvider,
                deviceIdentifier: session.deviceIdentifier,
                mvpd: profile.mvpd,
                userId: profile.userId,
                householdId: profile.householdId,
                sessionId: profile.sessionId,
                notBefore: profile.notBefore,
                notAfter: profile.notAfter,
                attributes: profile.attributes.mapValues { .init(value: $0.value, state: $0.encrypted ? "enc" : "plain") }
            )
        )
    }

    @Sendable func expire(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            CodeRequest.self,
            from: request,
            context: context,
            orThrow: AdminError(status: .badRequest, error: "invalid_request", message: #"Expected JSON {"code": "…"}."#)
        )
        if OAuthDeviceAuthority.isUserCode(body.code) {
            return try OAuthAdminRoutes(state: self.state).expire(userCode: body.code, context: context)
        }
        guard self.state.withLock({ $0.expireCode(body.code) }) else {
            throw AdminError(status: .notFound, error: "unknown_code", message: "No code \(body.code.uppercased()) was issued.")
        }
        context.logger.info("code expired by admin", metadata: ["code": .string(body.code.uppercased())])
        return try JSONBody.response(.ok, ["code": body.code.uppercased(), "status": "expired"])
    }

    @Sendable func expireTokens(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            ClientRequest.self,
            from: request,
            context: context,
            orThrow: AdminError(status: .badRequest, error: "invalid_request", message: #"Expected JSON {"clientId": "…"}."#)
        )
        guard let revoked = self.state.withLock({ $0.expireAccessTokens(ofClient: body.clientId) }) else {
            throw AdminError(status: .notFound, error: "unknown_client", message: "No client \(body.clientId) was registered.")
        }
        context.logger.info("access tokens expired by admin", metadata: ["dcr.client_id": .string(body.clientId)])
        return try JSONBody.response(.ok, ExpiredTokens(clientId: body.clientId, revoked: revoked))
    }

    @Sendable func codes(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sessions = self.state.withLock { $0.liveSessions() }
        let summaries = sessions.map { session in
            CodeSummary(
                code: session.code,
                api: session.api,
                serviceProvider: session.serviceProvider,
                deviceIdentifier: session.deviceIdentifier,
                clientId: session.clientId,
                mvpd: session.mvpd,
                status: Self.statusName(session),
                notBefore: session.notBefore,
                notAfter: session.notAfter,
                script: session.script
            )
        }
        return try JSONBody.response(.ok, CodesResponse(codes: summaries))
    }

    /// `PUT /_sim/codes/{code}/script` with a ``CodeScript``: decides what the simulated user does with the code.
    @Sendable func script(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let code = try context.parameters.require("code")
        let script = try await JSONBody.decode(
            CodeScript.self,
            from: request,
            context: context,
            orThrow: AdminError(
                status: .badRequest,
                error: "invalid_request",
                message: #"Expected JSON {"outcome": "approve"|"deny"|"never", "after"?: seconds, "mvpd"?: "…", "userId"?: "…"}."#
            )
        )
        if OAuthDeviceAuthority.isUserCode(code) {
            return try OAuthAdminRoutes(state: self.state).script(script, userCode: code, context: context)
        }
        let session: AuthenticationSession
        do {
            session = try self.state.withLock { (state) throws(CodeCompletionError) in try state.setScript(script, forCode: code) }
        } catch {
            throw Self.adminError(error, code: code)
        }
        context.logger.info(
            "code scripted",
            metadata: ["code": .string(session.code), "script.outcome": .string(script.outcome.rawValue)]
        )
        return try JSONBody.response(.ok, ScriptResponse(code: session.code, status: Self.statusName(session), script: script))
    }

    @Sendable func getDeny(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, self.state.withLock { $0.denyLists() })
    }

    /// `PUT /_sim/deny {"resources": {resource: details}, "mvpds": {mvpd: details}}` replaces both lists.
    @Sendable func putDeny(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let lists = try await JSONBody.decode(
            DenyLists.self,
            from: request,
            context: context,
            orThrow: AdminError(
                status: .badRequest,
                error: "invalid_request",
                message: #"Expected JSON {"resources"?: {"<resource>": "<details>"}, "mvpds"?: {"<mvpd>": "<details>"}}."#
            )
        )
        self.state.withLock { $0.setDenyLists(lists) }
        context.logger.info(
            "deny lists replaced",
            metadata: ["deny.resources": .stringConvertible(lists.resources.count), "deny.mvpds": .stringConvertible(lists.mvpds.count)]
        )
        return try JSONBody.response(.ok, lists)
    }

    @Sendable func getFaults(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, self.faults.configuration)
    }

    /// `PUT /_sim/faults` with a ``FaultConfiguration`` replaces the settings in force.
    @Sendable func putFaults(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let configuration: FaultConfiguration
        do {
            // Foundation's coder stays: a `Codable` type, and its `DecodingError` path is the error text admins see.
            configuration = try JSONDecoder().decode(FaultConfiguration.self, from: Data(buffer: buffer))
            try configuration.validate()
        } catch let error as FaultConfigurationError {
            throw AdminError(status: .badRequest, error: "invalid_faults", message: error.description)
        } catch {
            throw AdminError(status: .badRequest, error: "invalid_faults", message: "Expected a fault configuration: \(Self.describe(error))")
        }
        self.faults.replace(configuration)
        context.logger.notice("fault configuration replaced")
        return try JSONBody.response(.ok, configuration)
    }

    @Sendable func getStats(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        var stats = self.faults.stats
        stats.connections = self.connections.snapshot
        stats.peers = self.connections.peers.snapshot
        if let listener { stats.listener = ListenerStats(listener.snapshot) }
        stats.oauth = self.state.withLock { $0.oauth.stats }
        return try JSONBody.response(.ok, stats)
    }

    @Sendable func resetStats(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        self.faults.resetStats()
        self.state.withLock { $0.oauth.resetStats() }
        self.connections.reset()
        self.listener?.resetTotals()
        return Response(status: .noContent)
    }

    private static func statusName(_ session: AuthenticationSession) -> String {
        switch session.status {
        case .pending: return "pending"
        case .completed: return "completed"
        case .superseded: return "superseded"
        case .expired:
            switch session.cutoff?.reason {
            case .denied?: return "denied"
            case .deleted?: return "deleted"
            case .earlyExpiry?, nil: return "expired"
            }
        }
    }

    /// A short reason for a JSON decoding failure, without echoing the request body.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
            DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _):
            return "missing \(key.stringValue)"
        default:
            return "not valid JSON"
        }
    }

    private static func adminError(_ error: CodeCompletionError, code: String) -> AdminError {
        let code = code.uppercased()
        switch error {
        case .unknownCode:
            return AdminError(status: .notFound, error: "unknown_code", message: "No code \(code) was issued.")
        case .codeGone:
            return AdminError(status: .gone, error: "code_expired", message: "The code \(code) has expired or was replaced by a newer code.")
        case .unknownMVPD(let mvpd):
            return AdminError(status: .badRequest, error: "unknown_mvpd", message: "The MVPD \"\(mvpd)\" is not configured.")
        case .alreadyCompleted(let profile):
            return AdminError(
                status: .conflict,
                error: "already_completed",
                message: "The code \(code) was already completed with \(profile.mvpd)."
            )
        }
    }
}
