import Hummingbird
import Logging

/// The OAuth device flow's test hooks under `/_sim/oauth`: list codes, approve or deny one by its user code.
///
/// `POST /_sim/approve`, `POST /_sim/expire` and `PUT /_sim/codes/{code}/script` take user codes too (they are told
/// apart from Adobe codes by their shape), so a harness drives both kinds of code the same way; scripts and
/// `--auto-approve-after` apply to both.
struct OAuthAdminRoutes: Sendable {
    let state: SharedSimulatorState

    private struct CodeRequest: Decodable {
        let code: String?
        let user_code: String?
        let userId: String?

        var userCode: String? { self.code ?? self.user_code }
    }

    private struct CodeSummary: Encodable {
        let user_code: String
        let client_id: String
        let scope: String?
        let status: OAuthDeviceAuthority.DeviceCode.Status
        let interval: Int64
        let issued_at: Int64
        let expires_at: Int64
        let script: CodeScript?
        let subject: String?
    }

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("codes", [.get: self.codes])
        routes.endpoint("approve", [.post: self.approve])
        routes.endpoint("deny", [.post: self.deny])
    }

    /// `GET /_sim/oauth/codes`: codes still pending or approved, oldest first.
    @Sendable func codes(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let codes = self.state.withLock { state in
            let now = state.now
            return state.oauth.liveCodes(now: now).map { Self.summary($0, now: now) }
        }
        return try JSONBody.response(.ok, ["codes": codes])
    }

    /// `POST /_sim/oauth/approve {"code": "BCDF-GHJK", "userId"?: "…"}`: as if the user approved on the page.
    @Sendable func approve(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await Self.decode(request, context: context)
        return try self.decide(userCode: body.code, approve: true, subject: body.userId, context: context)
    }

    /// `POST /_sim/oauth/deny {"code": "BCDF-GHJK"}`: as if the user denied; polls get `access_denied`.
    @Sendable func deny(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await Self.decode(request, context: context)
        return try self.decide(userCode: body.code, approve: false, subject: nil, context: context)
    }

    func decide(userCode: String, approve: Bool, subject: String?, context: SimulatorRequestContext) throws -> Response {
        let summary: CodeSummary
        do {
            summary = try self.state.withLock { (state) throws(OAuthDeviceAuthority.CodeError) in
                let now = state.now
                let code =
                    approve
                    ? try state.oauth.approve(userCode: userCode, subject: subject, now: now)
                    : try state.oauth.deny(userCode: userCode, now: now)
                return Self.summary(code, now: now)
            }
        } catch {
            throw Self.adminError(error, userCode: userCode)
        }
        context.logger.info(
            approve ? "oauth code approved" : "oauth code denied",
            metadata: ["oauth.user_code": .string(summary.user_code), "oauth.client_id": .string(summary.client_id)]
        )
        return try JSONBody.response(.ok, summary)
    }

    func expire(userCode: String, context: SimulatorRequestContext) throws -> Response {
        let shown = OAuthDeviceAuthority.DeviceCode.display(OAuthDeviceAuthority.normalizedUserCode(userCode))
        guard self.state.withLock({ $0.oauth.expire(userCode: userCode, now: $0.now) }) else {
            throw Self.adminError(.unknownCode, userCode: userCode)
        }
        context.logger.info("oauth code expired by admin", metadata: ["oauth.user_code": .string(shown)])
        return try JSONBody.response(.ok, ["code": shown, "status": "expired"])
    }

    func script(_ script: CodeScript, userCode: String, context: SimulatorRequestContext) throws -> Response {
        let summary: CodeSummary
        do {
            summary = try self.state.withLock { (state) throws(OAuthDeviceAuthority.CodeError) in
                let now = state.now
                return Self.summary(try state.oauth.setScript(script, userCode: userCode, now: now), now: now)
            }
        } catch {
            throw Self.adminError(error, userCode: userCode)
        }
        context.logger.info(
            "oauth code scripted",
            metadata: ["oauth.user_code": .string(summary.user_code), "script.outcome": .string(script.outcome.rawValue)]
        )
        return try JSONBody.response(.ok, summary)
    }

    private static func decode(_ request: Request, context: SimulatorRequestContext) async throws -> (code: String, userId: String?) {
        let invalid = AdminRoutes.AdminError(
            status: .badRequest,
            error: "invalid_request",
            message: #"Expected JSON {"code": "XXXX-XXXX", "userId"?: "…"}."#
        )
        let body = try await JSONBody.decode(CodeRequest.self, from: request, context: context, orThrow: invalid)
        guard let code = body.userCode, !code.isEmpty else { throw invalid }
        return (code, body.userId)
    }

    private static func summary(_ code: OAuthDeviceAuthority.DeviceCode, now: Int64) -> CodeSummary {
        let subject: String? =
            if case .approved(let subject) = code.phase { subject } else { nil }
        return CodeSummary(
            user_code: code.displayedUserCode,
            client_id: code.clientId,
            scope: code.scope,
            status: code.status(now: now),
            interval: code.interval / 1000,
            issued_at: code.issuedAt,
            expires_at: code.expiresAt,
            script: code.script,
            subject: subject
        )
    }

    static func adminError(_ error: OAuthDeviceAuthority.CodeError, userCode: String) -> AdminRoutes.AdminError {
        let shown = OAuthDeviceAuthority.DeviceCode.display(OAuthDeviceAuthority.normalizedUserCode(userCode))
        switch error {
        case .unknownCode:
            return AdminRoutes.AdminError(status: .notFound, error: "unknown_code", message: "No user code \(shown) was issued.")
        case .codeGone:
            return AdminRoutes.AdminError(status: .gone, error: "code_expired", message: "The user code \(shown) has expired or was already used.")
        case .alreadyDecided(let approved):
            return AdminRoutes.AdminError(
                status: .conflict,
                error: "already_completed",
                message: "The user code \(shown) was already \(approved ? "approved" : "denied")."
            )
        }
    }
}
