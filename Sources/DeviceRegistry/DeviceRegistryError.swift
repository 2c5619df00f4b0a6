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
    /// The fleet refused (stopping, held, unknown app …).
    case fleet(FleetError)
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
        case .fleet(let error): "\(error)"
        case .store(let reason): "database: \(reason)"
        case .storageUnavailable(let reason): "storage unavailable: \(reason)"
        case .inconsistent(let reason): reason
        }
    }
}

extension DeviceRegistryError {
    /// The error for a failed store call: ``storageUnavailable(_:)`` when storage may recover, else ``store(_:)``.
    package static func storeFailure(_ error: any Error) -> Self {
        RegcodeStore.isUnavailable(error) ? .storageUnavailable("\(error)") : .store("\(error)")
    }
}
