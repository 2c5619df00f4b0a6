import RegcodeEngine

/// What a device's apps are and what their shared storage holds, for the control socket.
extension Fleet {
    /// One app of a device as `apps.list` shows it.
    package struct AppStatus: Sendable {
        package var id: String
        package var identity: AppIdentity?
        package var deviceID: String
        package var phase: DevicePhase
        package var profile: AuthProfile?
        /// The storage domain key, for devices that host apps.
        package var domain: String?
    }

    /// The apps of a device, first app first; nil for an unknown device.
    package func apps(of device: String) -> [AppStatus]? {
        guard let member = members[device] else { return nil }
        return member.apps.indices.map { index in
            let engine = member.apps[index].machine
            return AppStatus(
                id: member.apps[index].id,
                identity: member.sso?.apps[index].identity,
                deviceID: engine.deviceID,
                phase: engine.phase,
                profile: engine.snapshot.profile,
                domain: member.sso?.storage(of: index).domain.key
            )
        }
    }

    /// Settings of one app of a device (`nil` app: the first).
    package func settings(of device: String, app appID: String?) throws(FleetError) -> DeviceSettings {
        guard let member = members[device] else { throw .unknownDevice(device) }
        return member.apps[try appIndex(appID, of: member, device: device)].machine.settings
    }

    /// `sso.explain`; nil when the device hosts no apps (nothing is shared).
    package func explain(device: String, app appID: String?) throws(FleetError) -> SSOExplanation? {
        guard let member = members[device] else { throw .unknownDevice(device) }
        let app = try appIndex(appID, of: member, device: device)
        guard let host = member.sso else { return nil }
        let engine = member.apps[app].machine
        return host.explain(
            app: app,
            configuredMVPDs: Set((engine.snapshot.mvpds ?? []).map(\.id)),
            backend: engine.settings.profile,
            now: clock.epochMillisecondsNow
        )
    }

    /// The device's shared tokens as its storage holds them now.
    package func tokens(of device: String) throws(FleetError) -> [SharedToken] {
        guard let member = members[device] else { throw .unknownDevice(device) }
        return member.sso?.tokens ?? []
    }
}
