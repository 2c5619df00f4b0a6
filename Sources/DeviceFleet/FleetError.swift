/// Why a fleet operation was refused.
package enum FleetError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownDevice(String)
    case duplicateDevice(String)
    case stopped
    /// The fleet is held (e.g. its steps cannot be stored) and takes no new work for now.
    case held(String)
    /// The device already has this many calls and operations waiting; the caller should wait for
    /// their callbacks before sending more.
    case busy(device: String, pending: Int)
    /// The device hosts no app with this id.
    case unknownApp(device: String, app: String)
    /// The device does not emulate a TV Provider (no `tv_provider` configured).
    case noTVProvider(String)
    /// No Apple picker is open in that app.
    case noTVProviderPicker(device: String, app: String)

    package var description: String {
        switch self {
        case .unknownDevice(let name): "unknown device '\(name)'"
        case .duplicateDevice(let name): "a device named '\(name)' already exists"
        case .stopped: "the fleet is stopping"
        case .held(let reason): "the fleet takes no new work for now: \(reason)"
        case .busy(let device, let pending): "device '\(device)' already has \(pending) calls waiting; wait for their callbacks"
        case .unknownApp(let device, let app): "device '\(device)' has no app '\(app)'"
        case .noTVProvider(let device): "device '\(device)' has no TV Provider (configure tv_provider)"
        case .noTVProviderPicker(let device, let app): "no TV Provider picker is open in app '\(app)' of device '\(device)'"
        }
    }
}
