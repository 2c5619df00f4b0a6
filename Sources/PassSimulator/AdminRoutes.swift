import Hummingbird
import Logging

/// Test hooks under `/_sim`: complete or expire a code as if on a second screen, expire a client's access
/// tokens, list live codes.
///
/// Errors use a small JSON body `{"error": "<code>", "message": "…"}`; they are for test harnesses, not devices.
struct AdminRoutes: Sendable {
    let state: SimulatorState

    private struct ApproveRequest: Decodable {
        let code: String
        let mvpd: String?
        let userId: String?
    }

    private struct CodeRequest: Decodable {
        let code: String
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
        let serviceProvider: String
        let deviceIdentifier: String
        let mvpd: String
        let userId: String
        let householdId: String
        let sessionId: String
        let notBefore: Int64
        let notAfter: Int64
    }

    private struct CodeSummary: Encodable {
        let code: String
        let serviceProvider: String
        let deviceIdentifier: String
        let clientId: String
        let mvpd: String?
        let status: String
        let notBefore: Int64
        let notAfter: Int64
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
        routes.endpoint("codes", [.get: self.codes])
    }

    @Sendable func approve(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(
            ApproveRequest.self,
            from: request,
            context: context,
            orThrow: AdminError(status: .badRequest, error: "invalid_request", message: #"Expected JSON {"code": "…", "mvpd"?: "…", "userId"?: "…"}."#)
        )
        let profile: SimulatedProfile
        do {
            profile = try await self.state.completeCode(body.code, mvpd: body.mvpd, userId: body.userId)
        } catch {
            throw Self.adminError(error, code: body.code)
        }
        guard let session = await self.state.session(code: body.code) else {
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
                serviceProvider: session.serviceProvider,
                deviceIdentifier: session.deviceIdentifier,
                mvpd: profile.mvpd,
                userId: profile.userId,
                householdId: profile.householdId,
                sessionId: profile.sessionId,
                notBefore: profile.notBefore,
                notAfter: profile.notAfter
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
        guard await self.state.expireCode(body.code) else {
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
        guard let revoked = await self.state.expireAccessTokens(ofClient: body.clientId) else {
            throw AdminError(status: .notFound, error: "unknown_client", message: "No client \(body.clientId) was registered.")
        }
        context.logger.info("access tokens expired by admin", metadata: ["dcr.client_id": .string(body.clientId)])
        return try JSONBody.response(.ok, ExpiredTokens(clientId: body.clientId, revoked: revoked))
    }

    @Sendable func codes(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let sessions = await self.state.liveSessions()
        let summaries = sessions.map { session in
            let status: String
            switch session.status {
            case .pending: status = "pending"
            case .completed: status = "completed"
            case .expired: status = "expired"
            case .superseded: status = "superseded"
            }
            return CodeSummary(
                code: session.code,
                serviceProvider: session.serviceProvider,
                deviceIdentifier: session.deviceIdentifier,
                clientId: session.clientId,
                mvpd: session.mvpd,
                status: status,
                notBefore: session.notBefore,
                notAfter: session.notAfter
            )
        }
        return try JSONBody.response(.ok, CodesResponse(codes: summaries))
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
