import ControlRPC
import DeviceRegistry
import RegcodeEngine
import RegcodeSupport

/// The single sign-on methods: a device's apps, why an app is (not) signed in, and what its storage
/// holds (metadata only: token values never leave the daemon).
extension ControlMethodsHandler {
    func appsList(_ device: String) async throws(RPCError) -> JSONValue {
        let apps: [AppStatus]
        do {
            apps = try await context.devices.apps(of: device)
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "device": .string(device),
            "apps": .array(
                apps.map { app in
                    var object: [String: JSONValue] = [
                        "app": .string(app.id),
                        "state": .string(app.phase.rawValue),
                        "deviceId": .string(app.deviceID),
                        "domain": app.domain.map(JSONValue.string) ?? .null,
                        "authenticated": app.profile.map { .string($0.mvpd) } ?? .null,
                    ]
                    if let identity = app.identity {
                        object["bundleId"] = .string(identity.bundleId)
                        object["teamId"] = .string(identity.teamId)
                        object["requestor"] = .string(identity.requestor)
                        object["accessEnabler"] = .string(identity.accessEnabler.description)
                        object["installSource"] = .string(identity.installSource.rawValue)
                        object["vendorGeneration"] = .int(Int64(identity.vendorGeneration))
                    }
                    return .object(object)
                }
            ),
        ]
    }

    func explain(_ device: String, app: String?) async throws(RPCError) -> JSONValue {
        let explanation: SSOExplanation?
        do {
            explanation = try await context.devices.explain(device: device, app: app)
        } catch {
            throw Self.rpcError(error)
        }
        guard let explanation else {
            return [
                "device": .string(device),
                "app": .string(app ?? DeviceStep.defaultApp),
                "sharing": false,
                "reason": "the device hosts one plain app: nothing is shared (configure `apps` to emulate single sign-on)",
            ]
        }
        return [
            "device": .string(device),
            "app": .string(explanation.app),
            "sharing": true,
            "domain": .string(explanation.domain.key),
            "rule": .string(explanation.rule.rawValue),
            "faithful": .bool(explanation.faithful),
            "deviceId": .string(explanation.deviceID),
            "idfv": .string(explanation.idfv),
            "idfvVendorKey": .string(explanation.vendorKey),
            "candidates": .array(
                explanation.candidates.map { candidate in
                    var object = Self.tokenJSON(candidate.token).objectValue ?? [:]
                    object["usable"] = .bool(candidate.verdict == .used || candidate.verdict == .notReached)
                    object["reason"] = .string(candidate.verdict.text)
                    return .object(object)
                }
            ),
        ]
    }

    func storageList(_ device: String, domain: String?) async throws(RPCError) -> JSONValue {
        if let domain, StorageDomain(key: domain) == nil {
            throw .invalidParams("'domain' is not a storage domain (global, team:T, app:BUNDLE, keychain:T:v30|v37)", data: ["member": "domain"])
        }
        let tokens: [SharedToken]
        do {
            tokens = try await context.devices.tokens(of: device)
        } catch {
            throw Self.rpcError(error)
        }
        let shown = tokens.filter { domain == nil || $0.metadata.domain.key == domain }
        return ["device": .string(device), "tokens": .array(shown.map(Self.tokenJSON))]
    }

    /// A token's metadata; there is no token value to leak (the device keeps only what identifies it).
    static func tokenJSON(_ token: SharedToken) -> JSONValue {
        [
            "domain": .string(token.metadata.domain.key),
            "owner": .string(token.creatorAppID),
            "ownerBundleId": .string(token.metadata.creatorApp),
            "boundDeviceId": .string(token.metadata.boundDeviceId),
            "requestor": .string(token.metadata.requestor),
            "mvpd": .string(token.metadata.mvpd),
            "tokenSource": .string(token.source.rawValue),
            "format": .string(token.metadata.formatGeneration.rawValue),
            "expires": .int(token.metadata.notAfter),
        ]
    }
}
