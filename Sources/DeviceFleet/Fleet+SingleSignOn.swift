import RegcodeEngine

/// Single sign-on between the apps of a device: each app's engine keeps its own login, and the
/// device's ``SSOHost`` is the storage they share. Before a call the app's AccessEnabler reads its
/// domain (the engine takes over what it finds); after a step the host records what the engine
/// adopted or dropped, and the step carries the changed storage to the store.
extension Fleet {
    /// Builds one engine per app. A plain device gets one app, `main`, with the device's own id.
    func makeApps(_ spec: DeviceSpec) -> [AppSlot] {
        let host = spec.makeSSOHost()
        var first = spec.settings
        if let app = spec.firstApp { first.requestor = app.identity.requestor }
        var slots = [
            AppSlot(
                id: spec.firstApp?.id ?? DeviceStep.defaultApp,
                machine: AppMachine(
                    settings: first,
                    deviceID: host?.deviceID(of: 0) ?? spec.deviceID,
                    snapshot: spec.snapshot,
                    clock: clock,
                    seed: spec.seed
                )
            )
        ]
        for (offset, other) in spec.otherApps.enumerated() {
            var settings = spec.settings
            settings.requestor = other.app.identity.requestor
            settings.deviceInfo.applicationId = other.app.identity.bundleId
            if let statement = other.softwareStatement { settings.softwareStatement = statement }
            let index = offset + 1
            slots.append(
                AppSlot(
                    id: other.app.id,
                    machine: AppMachine(
                        settings: settings,
                        deviceID: host?.deviceID(of: index) ?? spec.deviceID,
                        snapshot: other.snapshot,
                        clock: clock,
                        // Each app its own jitter sequence, reproducible from the device's seed.
                        seed: spec.seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
                    )
                )
            )
        }
        return slots
    }

    /// What the app's AccessEnabler does with its storage before `command`: `setRequestor` runs the
    /// version rules (wipe, `SEC412`); calls that ask "am I authenticated?" look the domain up and
    /// the engine takes over the result; `logout` then empties the domain. Returns the actions to
    /// record before the engine's own.
    func storageBefore(_ command: DeviceCommand, device: String, app: Int) -> [DeviceAction] {
        guard var host = members[device]?.sso, let engine = members[device]?.apps[app].machine else { return [] }
        var actions: [DeviceAction] = []
        var changed = false
        var cleared: [Int] = []
        switch command {
        case .setRequestor:
            let (events, status, wipedFrom) = host.setRequestor(app: app)
            changed = !events.isEmpty
            actions += events.map { .emit(.sso($0)) }
            if let status { actions.append(.emit(.status(status))) }
            cleared = wipedFrom
        case .checkAuthentication, .getAuthentication, .getAuthorization, .checkAuthorization, .checkPreauthorizedResources,
            .getMetadata, .logout:
            let configured = Set((engine.snapshot.mvpds ?? []).map(\.id))
            let (result, events) = host.lookup(
                app: app,
                configuredMVPDs: configured,
                backend: engine.settings.profile,
                now: clock.epochMillisecondsNow
            )
            // Diagnostics belong to the "am I authenticated?" questions; other calls read storage silently.
            switch command {
            case .checkAuthentication, .getAuthentication: actions += events.map { .emit(.sso($0)) }
            default: break
            }
            let profile = result.token.flatMap { host.sharedToken(for: $0)?.profile }
            changed = host.engineHolds(profile, app: app, backend: engine.settings.profile)
            if let adopted = members[device]?.apps[app].machine.storageHolds(profile) { actions += adopted }
            if case .logout = command {
                cleared = host.logout(app: app)
                changed = true
            }
        default:
            return []
        }
        members[device]?.sso = host
        for other in cleared {
            guard let forgot = members[device]?.apps[other].machine.storageHolds(nil) else { continue }
            if other == app {
                actions += forgot
            } else {
                process(device, app: other, forgot)
            }
        }
        if changed, let tokens = members[device]?.sso?.tokens {
            actions.append(.storeTokens(tokens))
        }
        return actions
    }

    /// After a step that changed an app's durable state: records what its engine now holds in the
    /// shared storage. Returns the device's tokens when they changed.
    func storageAfter(_ snapshot: DeviceSnapshot, device: String, app: Int) -> [SharedToken]? {
        guard var host = members[device]?.sso, let backend = members[device]?.apps[app].machine.settings.profile else { return nil }
        let changed = host.engineHolds(snapshot.profile, app: app, backend: backend)
        members[device]?.sso = host
        return changed ? host.tokens : nil
    }
}
