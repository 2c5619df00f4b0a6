/// The per-device bound on waiting work: which calls it may refuse. Only calls that would wait (for
/// `setRequestor`, or behind the request in flight) count and are refused; the calls an app needs to get a
/// device going again are never refused by it, so a device whose queue is full cannot wedge.
extension DeviceEngine {
    /// Whether the bound refuses `command` now. `bound` is the most calls and operations a device may have waiting.
    ///
    /// Never refused: `setOptions` and `getSelectedProvider` (answered at once); `setRequestor` (the call that
    /// releases the calls waiting for a configured device; the cookbook's recovery when the network failed), unless
    /// another `setRequestor` is already waiting to be sent, which releases them as well; and on a configured device
    /// `checkAuthentication`, `setSelectedProvider(nil)` (the cookbook's cancel, which resets the authentication flow)
    /// and `logout`, which are answered from the device's state (a logout sends at most one call per profile).
    package func refuses(_ command: DeviceCommand, bound: Int) -> Bool {
        switch command {
        case .setOptions, .getSelectedProvider:
            return false
        case .setRequestor:
            return pipeline.queue.contains(where: \.opensTheApp) && pendingWork >= bound
        case .checkAuthentication, .setSelectedProvider(.none), .logout:
            if case .configured = setup { return false }
        default:
            break
        }
        return waitingCalls >= bound
    }

    /// What the bound counts: calls waiting for a configured device and operations waiting behind the request in
    /// flight, not the configuration requests of `setRequestor` (which release them).
    package var waitingCalls: Int {
        pendingWork - pipeline.queue.lazy.filter { $0.opensTheApp || $0 == .refreshConfiguration }.count
    }
}

extension DeviceEngine.Operation {
    /// The calls whose throttling Adobe's throttling page says the SDK reports at once (`CFG429`, `Z100`, `P100`,
    /// an empty `setMetadataStatus`).
    var sdkReportsThrottling: Bool {
        switch self {
        case .configure, .authorize, .mediaToken, .preauthorize, .userMetadata: true
        default: false
        }
    }

    /// The request of `setRequestor`: the configuration, or a native app's launch check.
    var opensTheApp: Bool {
        switch self {
        case .configure, .launchCheck: true
        default: false
        }
    }
}
