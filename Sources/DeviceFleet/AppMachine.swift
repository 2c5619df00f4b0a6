import OAuthDeviceClient
import RegcodeEngine

/// The state machine behind one app of a device: an Adobe Pass engine (AccessEnabler or native REST v2 app) or an
/// OAuth device (RFC 8628). The fleet drives both through the same inputs and actions; what only an Adobe engine
/// has (shared token storage, the TV Provider) is a no-op for an OAuth device, which never has either.
enum AppMachine: Sendable {
    case adobePass(DeviceEngine)
    /// Boxed: inline, its settings and the provider's row would make every Adobe device's slot as large.
    indirect case oauthDevice(OAuthDeviceEngine)

    init(settings: DeviceSettings, deviceID: String, snapshot: DeviceSnapshot, clock: any DeviceClock, seed: UInt64) {
        if settings.oauth != nil {
            self = .oauthDevice(OAuthDeviceEngine(settings: settings, deviceID: deviceID, snapshot: snapshot, clock: clock, seed: seed))
        } else {
            self = .adobePass(DeviceEngine(settings: settings, deviceID: deviceID, snapshot: snapshot, clock: clock, seed: seed))
        }
    }

    var settings: DeviceSettings {
        switch self {
        case .adobePass(let engine): engine.settings
        case .oauthDevice(let device): device.settings
        }
    }

    var deviceID: String {
        switch self {
        case .adobePass(let engine): engine.deviceID
        case .oauthDevice(let device): device.deviceID
        }
    }

    var phase: DevicePhase {
        switch self {
        case .adobePass(let engine): engine.phase
        case .oauthDevice(let device): device.phase
        }
    }

    var snapshot: DeviceSnapshot {
        switch self {
        case .adobePass(let engine): engine.snapshot
        case .oauthDevice(let device): device.snapshot
        }
    }

    /// Calls and operations waiting (an OAuth device queues none: a login already running ignores another).
    var pendingWork: Int {
        if case .adobePass(let engine) = self { return engine.pendingWork }
        return 0
    }

    var waitingCalls: Int {
        if case .adobePass(let engine) = self { return engine.waitingCalls }
        return 0
    }

    func refuses(_ command: DeviceCommand, bound: Int) -> Bool {
        if case .adobePass(let engine) = self { return engine.refuses(command, bound: bound) }
        return false
    }

    var isPresentingTVProvider: Bool {
        if case .adobePass(let engine) = self { return engine.isPresentingTVProvider }
        return false
    }

    mutating func resume() -> [DeviceAction] {
        change {
            $0.resume()
        } oauth: {
            $0.resume()
        }
    }

    mutating func handle(_ command: DeviceCommand) -> [DeviceAction] {
        change {
            $0.handle(command)
        } oauth: {
            $0.handle(command)
        }
    }

    mutating func handle(response: Result<BackendResponse, BackendFailure>, for id: RequestID, timing: RequestTiming) -> [DeviceAction] {
        change {
            $0.handle(response: response, for: id, timing: timing)
        } oauth: {
            $0.handle(response: response, for: id, timing: timing)
        }
    }

    mutating func timerFired(_ timer: DeviceTimer) -> [DeviceAction] {
        change {
            $0.timerFired(timer)
        } oauth: {
            $0.timerFired(timer)
        }
    }

    mutating func shutdown() -> [DeviceAction] {
        change {
            $0.shutdown()
        } oauth: {
            $0.shutdown()
        }
    }

    mutating func storageHolds(_ profile: AuthProfile?) -> [DeviceAction] {
        change {
            $0.storageHolds(profile)
        } oauth: { _ in
            []
        }
    }

    mutating func tvProviderChanged(_ state: TVProviderState?) {
        change {
            $0.tvProviderChanged(state)
        } oauth: { _ in
        }
    }

    /// Changes the machine in place: the payload is moved out and back, so an engine is never copied (a copy of an
    /// engine is dozens of retains, and the change would then copy its storage too).
    private mutating func change<Result>(
        _ adobePass: (inout DeviceEngine) -> Result,
        oauth: (inout OAuthDeviceEngine) -> Result
    ) -> Result {
        switch consume self {
        case .adobePass(var engine):
            let result = adobePass(&engine)
            self = .adobePass(engine)
            return result
        case .oauthDevice(var device):
            let result = oauth(&device)
            self = .oauthDevice(device)
            return result
        }
    }
}
