import RegcodeEngine

/// The lab's hand on a device's TV Provider (Apple single sign-on): sign the system account in or
/// out, set an app's permission, answer Apple's picker. Every change reaches each app's engine at once,
/// as apps read the account when they next ask.
extension Fleet {
    /// The device's TV Provider; nil when the device does not emulate one.
    package func tvProvider(of device: String) throws(FleetError) -> TVProviderDevice? {
        guard let member = members[device] else { throw .unknownDevice(device) }
        return member.tvProvider
    }

    /// Changes the device's TV Provider and tells every app; returns the new state.
    @discardableResult
    package func updateTVProvider(of device: String, _ change: (inout TVProviderDevice) -> Void) throws(FleetError) -> TVProviderDevice {
        guard var state = members[device]?.tvProvider else { throw .noTVProvider(device) }
        change(&state)
        members[device]?.tvProvider = state
        pushTVProvider(to: device)
        return state
    }

    /// Answers the open Apple picker of an app (`nil`: the first).
    package func selectTVProvider(_ choice: TVProviderChoice, device: String, app appID: String?) throws(FleetError) {
        guard !stopping else { throw .stopped }
        guard let member = members[device] else { throw .unknownDevice(device) }
        let app = try appIndex(appID, of: member, device: device)
        guard member.apps[app].machine.isPresentingTVProvider else { throw .noTVProviderPicker(device: device, app: member.apps[app].id) }
        if let held { throw .held(held.reason) }
        // Choosing a supported provider in Apple's picker signs the system account in (DOC `[ASSO]`); a
        // picker-only one hands over to the app's code flow and leaves the account signed out.
        if case .provider(let id) = choice, var state = member.tvProvider, state.account.providerID == nil,
            case .singleSignOn = AppleSSOCatalogue(mvpds: member.apps[app].machine.snapshot.mvpds ?? []).role(ofProvider: id)
        {
            state.account = TVProviderAccount(
                providerID: id,
                user: state.account.user ?? TVProviderUser(userID: "tv-provider-user"),
                expiresEpochMs: clock.epochMillisecondsNow + 30 * 86_400_000
            )
            members[device]?.tvProvider = state
            pushTVProvider(to: device)
        }
        apply(.selectTVProvider(choice), to: device, app: app)
    }

    func pushTVProvider(to device: String) {
        // No copy of the member lives across the change below: it would share the apps' storage and make the
        // change copy every engine of the device.
        guard let count = members[device]?.apps.count else { return }
        let provider = members[device]?.tvProvider
        for app in 0..<count {
            let id = members[device]?.apps[app].id
            let state = id.flatMap { provider?.state(for: $0) }
            members[device]?.apps[app].machine.tvProviderChanged(state)
        }
    }
}
