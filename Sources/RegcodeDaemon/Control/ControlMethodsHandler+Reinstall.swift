import ControlRPC
import DeviceRegistry
import RegcodeEngine
import RegcodeSupport

/// `apps.reinstall`: every app of an app's vendor is uninstalled, then installed again.
///
/// iOS hands out a new identifierForVendor once a vendor's last app is gone (APPLE), so the vendor's
/// apps get the next vendor generation and, with it, a new AccessEnabler device id (an app that kept
/// the device's stored id loses it). What the apps learned (login, DCR credentials, code) goes with
/// them; the shared token storage stays (keychain items and named pasteboards survive an uninstall),
/// which is what the AccessEnabler's `SEC412` rule then finds (sso.md §3.4 E6).
extension ControlMethodsHandler {
    func reinstallApp(_ name: String, app appID: String) async throws(RPCError) -> JSONValue {
        let report: ReinstallReport
        do {
            report = try await context.devices.reinstall(device: name, app: appID)
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "device": .string(name),
            "app": .string(appID),
            "vendorKey": .string(report.vendorKey),
            "reinstalled": .array(
                report.reinstalled.map { app in
                    [
                        "app": .string(app.app),
                        "vendorGeneration": .int(Int64(app.vendorGeneration)),
                        "deviceId": .string(app.deviceID),
                        "previousDeviceId": .string(app.previousDeviceID),
                    ]
                }
            ),
        ]
    }
}
