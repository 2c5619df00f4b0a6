import Hummingbird
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Admin routes of the entitlement variants under `/_sim`: read and replace them, list and reset TempPass trials.
struct EntitlementAdminRoutes: Sendable {
    let state: SharedSimulatorState

    private struct TrialsResponse: Encodable {
        let trials: [TempPassTrial]
    }

    private struct ResetResponse: Encodable {
        let reset: Int
    }

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("entitlements", [.get: self.getEntitlements, .put: self.putEntitlements])
        routes.endpoint("temppass", [.get: self.getTrials, .delete: self.resetTrials])
    }

    /// `GET /_sim/entitlements`: the variants in force.
    @Sendable func getEntitlements(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, self.state.withLock { $0.entitlementSettings() })
    }

    /// `PUT /_sim/entitlements` with the whole document (the shape of `--entitlements`) replaces the variants. Every
    /// MVPD it names must be configured (a TempPass MVPD is added to the list only by the configuration file).
    @Sendable func putEntitlements(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let settings: EntitlementSettings
        do {
            // Foundation's coder stays: a `Codable` type, and its `DecodingError` path is the error text admins see.
            settings = try JSONDecoder().decode(EntitlementSettings.self, from: Data(buffer: buffer))
        } catch {
            throw Self.invalid(
                #"Expected JSON {"tempPass"?: {mvpd: {"ttl", "maxResources"?}}, "degradation"?: [{"serviceProvider"?, "mvpd", "rule"}], "homeNetworks"?: {mvpd: {"addresses", "ttl"?}}, "itemErrors"?: {"resources"?, "mvpds"?}}: \#(AdminRoutes.describe(error))"#
            )
        }
        let known = Set(self.state.configuration.mvpds.map(\.id))
        let unknown = settings.unknownMVPDs(known: known)
        guard unknown.isEmpty else { throw Self.invalid("Unknown MVPD: \(unknown.joined(separator: ", ")).") }
        self.state.withLock { $0.setEntitlementSettings(settings) }
        context.logger.info(
            "entitlement variants replaced",
            metadata: [
                "tempPass": .stringConvertible(settings.tempPass.count), "degradation": .stringConvertible(settings.degradation.count),
                "homeNetworks": .stringConvertible(settings.homeNetworks.count),
            ]
        )
        return try JSONBody.response(.ok, settings)
    }

    /// `GET /_sim/temppass`: every TempPass trial (started, expiry, devices, identities, used resources).
    @Sendable func getTrials(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        try JSONBody.response(.ok, TrialsResponse(trials: self.state.withLock { $0.tempPassTrials() }))
    }

    /// `DELETE /_sim/temppass?serviceProvider=…&mvpd=…[&device=…|&key=…]` resets trials as Adobe's Reset TempPass API
    /// does; answers how many were dropped.
    @Sendable func resetTrials(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        guard let sp = query["serviceProvider"].flatMap(V2Routes.nonEmpty), let mvpd = query["mvpd"].flatMap(V2Routes.nonEmpty) else {
            throw Self.invalid("Expected the query serviceProvider=…&mvpd=… (and optionally device=… or key=…).")
        }
        let count = self.state.withLock {
            $0.resetTempPass(
                serviceProvider: sp,
                mvpd: mvpd,
                device: query["device"].flatMap(V2Routes.nonEmpty),
                key: query["key"].flatMap(V2Routes.nonEmpty)
            )
        }
        context.logger.info("TempPass reset", metadata: ["sp": .string(sp), "mvpd": .string(mvpd), "trials": .stringConvertible(count)])
        return try JSONBody.response(.ok, ResetResponse(reset: count))
    }

    static func invalid(_ message: String) -> AdminRoutes.AdminError {
        AdminRoutes.AdminError(status: .badRequest, error: "invalid_request", message: message)
    }
}
