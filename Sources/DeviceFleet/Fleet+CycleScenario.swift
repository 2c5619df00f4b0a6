import AccessEnablerAPI
import RegcodeEngine

/// The `cycle` scenario's own part: log in, hold the login while authorizing periodically, log
/// out, and again. It reacts to the device's callbacks and keeps one scenario timer per device.
extension Fleet {
    /// Moves a `cycle` device along its loop when a callback says a step finished.
    func cycleReaction(to event: DeviceEvent, device: String) -> [DeviceCommand] {
        guard var member = members[device], let signal = event.loginSignal else { return [] }
        let authenticated = signal == .signedIn
        var commands: [DeviceCommand] = []
        switch member.cycleState {
        case .loggingIn where authenticated:
            let until = clock.now.advanced(by: member.cycle.hold)
            member.cycleState = .holding(until: until)
            scheduleCycleTick(device, at: min(clock.now.advanced(by: member.cycle.authorizeEvery), until))
        case .loggingIn where signal == .loginFailed:
            // The login ended without success (code expired, none obtainable): try again after a pause.
            // ("User Not Authenticated Error" is only checkAuthentication's answer before the login.)
            scheduleCycleTick(device, at: clock.now.advanced(by: member.cycle.authorizeEvery))
        case .loggingIn:
            break
        case .loggingOut where !authenticated:
            member.cycleState = .loggingIn
            commands = [.getAuthentication(mvpd: nil)]
        case .holding, .loggingOut:
            break
        }
        members[device] = member
        return commands
    }

    /// The `cycle` scenario's own timer: authorize while holding, log out when the hold ends.
    func cycleTick(device: String) -> [DeviceCommand] {
        guard var member = members[device] else { return [] }
        switch member.cycleState {
        case .holding(let until) where clock.now < until:
            scheduleCycleTick(device, at: min(clock.now.advanced(by: member.cycle.authorizeEvery), until))
            return [.getAuthorization(resource: member.cycle.resource)]
        case .holding:
            member.cycleState = .loggingOut
            members[device] = member
            return [.logout]
        case .loggingIn:
            return [.getAuthentication(mvpd: nil)]
        case .loggingOut:
            return []
        }
    }

    func scheduleCycleTick(_ device: String, at deadline: DeviceInstant) {
        schedule(TimerKey(device: device, kind: .scenario), at: deadline)
    }
}
