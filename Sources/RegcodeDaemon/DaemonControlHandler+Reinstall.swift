import ControlSocket
import DeviceFleet
import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeSupport

/// `apps.reinstall`: every app of an app's vendor is uninstalled, then installed again.
///
/// iOS hands out a new identifierForVendor once a vendor's last app is gone (APPLE), so the vendor's
/// apps get the next vendor generation and, with it, a new AccessEnabler device id (an app that kept
/// the device's stored id loses it). What the apps learned (login, DCR credentials, code) goes with
/// them; the shared token storage stays (keychain items and named pasteboards survive an uninstall),
/// which is what the AccessEnabler's `SEC412` rule then finds (sso.md §3.4 E6).
extension DaemonControlHandler {
    func reinstallApp(_ name: String, app appID: String) async throws(RPCError) -> JSONValue {
        guard let settings = await daemon.fleet.settings(of: name), let running = await daemon.fleet.apps(of: name) else {
            throw .unknownDevice(name)
        }
        guard running.contains(where: { $0.id == appID }) else {
            throw Self.rpcError(FleetError.unknownApp(device: name, app: appID))
        }
        guard running.first?.identity != nil else {
            throw .wrongState(
                "device '\(name)' hosts one plain app: it has no vendor to reinstall (configure `apps` to emulate single sign-on)",
                data: ["device": .string(name)]
            )
        }
        // The storage as the running device has it: newer than the store until the pipeline catches up.
        let tokens: [SharedToken]
        do {
            tokens = try await daemon.fleet.tokens(of: name)
        } catch {
            throw Self.rpcError(error)
        }
        guard await daemon.fleet.remove(name) else { throw .unknownDevice(name) }
        // Steps the device made before it stopped must not land on the record saved below.
        await drainPipeline()
        let stored = try await reinstallStoreCall { store in try await store.loadDevices().first { $0.name == name } }
        guard var record = stored, !record.apps.isEmpty, let index = record.apps.firstIndex(where: { $0.app.id == appID }) else {
            throw .internalError("the stored record of '\(name)' does not list app '\(appID)'")
        }
        let cycle = daemon.catalog.fleet(named: record.fleet ?? "")?.cycle ?? daemon.catalog.fleet(forDevice: name)?.cycle
        var host = SSOHost(
            settings: settings.sso ?? DeviceSSOSettings(),
            apps: record.apps.map(\.app),
            storedDeviceID: record.deviceID,
            tokens: tokens,
            heldProfiles: []
        )
        let before = record.apps.indices.map { host.deviceID(of: $0) }
        host.reinstallVendor(of: index)
        var reinstalled: [JSONValue] = []
        for position in record.apps.indices
        where host.apps[position].identity.vendorGeneration != record.apps[position].app.identity.vendorGeneration {
            record.apps[position].app.identity.vendorGeneration = host.apps[position].identity.vendorGeneration
            // The app's own state is gone with it: the first app's is the device's.
            if position == 0 {
                record.snapshot = DeviceSnapshot()
            } else {
                record.apps[position].snapshot = DeviceSnapshot()
            }
            reinstalled.append([
                "app": .string(record.apps[position].app.id),
                "vendorGeneration": .int(Int64(host.apps[position].identity.vendorGeneration)),
                "deviceId": .string(host.deviceID(of: position)),
                "previousDeviceId": .string(before[position]),
            ])
        }
        record.tokens = tokens
        try await reinstallStoreCall { store in try await store.saveDevice(record) }
        do {
            try await daemon.fleet.add(record.spec(settings: settings, cycle: cycle))
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "device": .string(name),
            "app": .string(appID),
            "vendorKey": .string(host.vendorKey(of: index)),
            "reinstalled": .array(reinstalled),
        ]
    }

    /// Waits (a few seconds at most) until every step recorded so far is stored.
    private func drainPipeline() async {
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while daemon.pipeline.backlog > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    private func reinstallStoreCall<T: Sendable>(_ body: (RegcodeStore) async throws -> T) async throws(RPCError) -> T {
        do {
            return try await body(daemon.store)
        } catch {
            throw .internalError("database: \(error)")
        }
    }
}
