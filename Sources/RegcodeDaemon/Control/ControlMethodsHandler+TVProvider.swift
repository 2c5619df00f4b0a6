import ControlRPC
import DeviceRegistry
import Foundation
import RegcodeEngine
import RegcodeSupport

/// `vsa.*`: the lab's hand on a device's TV Provider (Apple single sign-on). Changes are stored, so
/// a restarted daemon finds the account signed in or out as the lab left it.
extension ControlMethodsHandler {
    func tvProviderStatus(_ device: String) async throws(RPCError) -> JSONValue {
        let state: TVProviderDevice
        do {
            state = try await context.devices.tvProvider(of: device)
        } catch {
            throw Self.rpcError(error)
        }
        return Self.tvProviderJSON(device, state)
    }

    func tvProviderSignIn(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let provider = try params.string("provider")
        let user = TVProviderUser(
            userID: try params.optionalString("userId") ?? "tv-provider-user",
            householdID: try params.optionalString("householdId"),
            zip: try params.optionalString("zip")
        )
        let expires = try params.optionalInt("expires") ?? Int64(Date().timeIntervalSince1970 * 1000) + 30 * 86_400_000
        return try await tvProviderUpdate(device) { $0.account = TVProviderAccount(providerID: provider, user: user, expiresEpochMs: expires) }
    }

    func tvProviderSetAccess(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let text = try params.string("access")
        guard let access = TVProviderAccess(rawValue: text) else {
            throw .invalidParams(
                "'access' must be one of \(TVProviderAccess.allCases.map(\.rawValue).joined(separator: ", "))",
                data: ["member": "access"]
            )
        }
        let app = try params.optionalString("app")
        let apps: [AppStatus]
        do {
            apps = try await context.devices.apps(of: device)
        } catch {
            throw Self.rpcError(error)
        }
        guard let appID = (app == nil ? apps.first : apps.first { $0.id == app })?.id else {
            throw Self.rpcError(DeviceRegistryError.unknownApp(device: device, app: app ?? ""))
        }
        return try await tvProviderUpdate(device) { $0.access[appID] = access }
    }

    /// A TV Provider failure every app meets until cleared (`kind: null`) or, with `once`, at its next report.
    func tvProviderInjectFault(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let fault: TVProviderFault?
        if let text = try params.optionalString("kind") {
            guard let kind = TVProviderFault.Kind(rawValue: text) else {
                throw .invalidParams(
                    "'kind' must be one of \(TVProviderFault.Kind.allCases.map(\.rawValue).joined(separator: ", ")) or null",
                    data: ["member": "kind"]
                )
            }
            fault = TVProviderFault(kind, once: params.object["once"]?.boolValue == true)
        } else {
            fault = nil
        }
        return try await tvProviderUpdate(device) { $0.fault = fault }
    }

    func tvProviderPick(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let app = try params.optionalString("app")
        let provider = try params.optionalString("provider")
        let other = params.object["other"]?.boolValue == true
        let cancel = params.object["cancel"]?.boolValue == true
        let choice: TVProviderChoice
        switch (provider, other, cancel) {
        case (let provider?, false, false): choice = .provider(provider)
        case (nil, true, false): choice = .other
        case (nil, false, true): choice = .cancel
        default: throw .invalidParams("give exactly one of 'provider', 'other': true or 'cancel': true")
        }
        do {
            try await context.devices.selectTVProvider(choice, device: device, app: app)
        } catch {
            throw Self.rpcError(error)
        }
        return ["device": .string(device), "accepted": true]
    }

    func tvProviderUpdate(_ device: String, _ change: @Sendable (inout TVProviderDevice) -> Void) async throws(RPCError) -> JSONValue {
        let state: TVProviderDevice
        do {
            state = try await context.devices.updateTVProvider(of: device, change)
        } catch {
            throw Self.rpcError(error)
        }
        return Self.tvProviderJSON(device, state)
    }

    static func tvProviderJSON(_ device: String, _ state: TVProviderDevice) -> JSONValue {
        let account = state.account
        return [
            "device": .string(device),
            "signedIn": .bool(account.providerID != nil),
            "provider": account.providerID.map(JSONValue.string) ?? .null,
            "userId": account.user.map { .string($0.userID) } ?? .null,
            "expires": account.providerID == nil ? .null : .int(account.expiresEpochMs),
            "defaultAccess": .string(state.defaultAccess.rawValue),
            "access": .object(state.access.mapValues { .string($0.rawValue) }),
            "fault": state.fault.map { .string($0.kind.rawValue) } ?? .null,
        ]
    }
}
