import DeviceFleet
import RegcodeStore

/// Why the registry refused or could not finish a change.
package enum DeviceRegistryError: Error, Sendable, CustomStringConvertible {
    /// No device of that name runs.
    case unknownDevice(String)
    /// A device of that name exists already.
    case duplicateDevice(String)
    /// `devices.add` named a fleet the configuration lacks.
    case unknownFleet(String, known: [String])
    /// The fleet's client addresses are all handed out.
    case noFreeAddress(device: String, range: String)
    /// Another change of the device is under way.
    case busy(String)
    /// The device hosts one plain app: there is no vendor to reinstall.
    case noVendor(String)
    /// The daemon is stopping: it takes no new work.
    case stopping
    /// New work waits until storage recovers (a hold, ``DeviceFleet/Fleet/hold(reason:)``).
    case held(String)
    /// The device has as many AccessEnabler calls waiting as it takes.
    case callsWaiting(device: String, pending: Int)
    /// The device hosts no app of that id.
    case unknownApp(device: String, app: String)
    /// The device's fleet has no TV Provider (`tv_provider`).
    case noTVProvider(String)
    /// No TV Provider picker is open in the app.
    case noTVProviderPicker(device: String, app: String)
    /// The database failed in a way retrying will not mend.
    case store(String)
    /// The database cannot be used now (locked by another process past the busy timeout, disk full, I/O error): the
    /// change did not happen and may be retried once storage recovers.
    case storageUnavailable(String)
    /// A state the registry's own logic rules out.
    case inconsistent(String)

    package var description: String {
        switch self {
        case .unknownDevice(let name): "unknown device '\(name)'"
        case .duplicateDevice(let name): "a device named '\(name)' already exists"
        case .unknownFleet(let name, _): "unknown fleet '\(name)'"
        case .noFreeAddress(let device, let range): "\(range) has no free address left for \(device)"
        case .busy(let name): "device '\(name)' is being changed; retry once that is done"
        case .noVendor(let name): "device '\(name)' hosts one plain app: it has no vendor to reinstall"
        case .stopping: FleetError.stopped.description
        case .held(let reason): FleetError.held(reason).description
        case .callsWaiting(let device, let pending): FleetError.busy(device: device, pending: pending).description
        case .unknownApp(let device, let app): FleetError.unknownApp(device: device, app: app).description
        case .noTVProvider(let device): FleetError.noTVProvider(device).description
        case .noTVProviderPicker(let device, let app): FleetError.noTVProviderPicker(device: device, app: app).description
        case .store(let reason): "database: \(reason)"
        case .storageUnavailable(let reason): "storage unavailable: \(reason)"
        case .inconsistent(let reason): reason
        }
    }
}

extension DeviceRegistryError {
    /// The fleet's refusal in the registry's words: callers of the registry see one error type.
    package init(_ error: FleetError) {
        switch error {
        case .unknownDevice(let name): self = .unknownDevice(name)
        case .duplicateDevice(let name): self = .duplicateDevice(name)
        case .stopped: self = .stopping
        case .held(let reason): self = .held(reason)
        case .busy(let device, let pending): self = .callsWaiting(device: device, pending: pending)
        case .unknownApp(let device, let app): self = .unknownApp(device: device, app: app)
        case .noTVProvider(let device): self = .noTVProvider(device)
        case .noTVProviderPicker(let device, let app): self = .noTVProviderPicker(device: device, app: app)
        }
    }

    /// The error for a failed store call: ``storageUnavailable(_:)`` when storage may recover, else ``store(_:)``.
    package static func storeFailure(_ error: any Error) -> Self {
        RegcodeStore.isUnavailable(error) ? .storageUnavailable("\(error)") : .store("\(error)")
    }
}
