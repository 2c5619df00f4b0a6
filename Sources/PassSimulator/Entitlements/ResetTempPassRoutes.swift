import Hummingbird
import Logging

/// Adobe's Reset TempPass API (`mgmt.auth.adobe.com`), served by the simulator at the same paths:
/// `DELETE /reset-tempass/v3/reset?requestor_id=…&mvpd_id=…[&device_id=…|all]` (basic and promotional, by device)
/// and `DELETE /reset-tempass/v3/reset/generic?requestor_id=…&mvpd_id=…[&key=…]` (promotional, by identity key).
/// A DCR access token is required (401 without one); 204 on success, 400 when the requestor or MVPD is missing,
/// unknown or not a TempPass MVPD.
struct ResetTempPassRoutes: Sendable {
    let routes: V2Routes

    var apiRoutes: [APIRoute] {
        [
            APIRoute("reset-tempass/v3/reset", .other, .v2, [.delete: self.reset]),
            APIRoute("reset-tempass/v3/reset/generic", .other, .v2, [.delete: self.resetGeneric]),
        ]
    }

    @Sendable func reset(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try await self.reset(request, context: context, keyName: "device_id")
    }

    @Sendable func resetGeneric(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try await self.reset(request, context: context, keyName: "key")
    }

    private func reset(_ request: Request, context: SimulatorRequestContext, keyName: String) async throws -> Response {
        guard let token = request.bearerToken, let client = self.routes.state.withLock({ $0.client(forAccessToken: token) }) else {
            throw EnhancedError.invalidAccessToken
        }
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        let configuration = self.routes.configuration
        guard let sp = query["requestor_id"].flatMap(V2Routes.nonEmpty), configuration.accepts(serviceProvider: sp) else {
            throw EnhancedError.invalidServiceProvider
        }
        guard configuration.softwareStatement(client.softwareId, covers: sp) else { throw EnhancedError.invalidAccessTokenServiceProvider }
        guard let mvpd = query["mvpd_id"].flatMap(V2Routes.nonEmpty), self.routes.state.withLock({ $0.isTempPass(mvpd) }) else {
            throw EnhancedError.invalidMVPD
        }
        // No value (or `all` for devices) resets every device or key.
        let value = query[keyName].flatMap(V2Routes.nonEmpty).flatMap { keyName == "device_id" && $0 == "all" ? nil : $0 }
        let count = self.routes.state.withLock {
            $0.resetTempPass(
                serviceProvider: sp,
                mvpd: mvpd,
                device: keyName == "device_id" ? value : nil,
                key: keyName == "key" ? value : nil
            )
        }
        context.logger.info("TempPass reset", metadata: ["sp": .string(sp), "mvpd": .string(mvpd), "trials": .stringConvertible(count)])
        return Response(status: .noContent)
    }
}
