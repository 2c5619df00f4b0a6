/// The app's part of a device: which AccessEnabler calls it makes on its own.
package enum Scenario: String, Sendable, Codable, CaseIterable {
    /// Log in once: `setRequestor`, `checkAuthentication`, `getAuthentication`, and answer the
    /// provider picker as ``DeviceSettings/loginProvider`` says: the configured MVPD, else the first regular
    /// one offered; or the first TempPass MVPD.
    case login
    /// Only act on commands from the control socket.
    case idle
    /// Log in, hold the login while authorizing a resource periodically, log out, and again
    /// (the timing comes from a ``CyclePlan``).
    case cycle

    /// Calls made when the device starts. A device that resumes a pending code makes none:
    /// the resumed poll loop is already doing the app's work.
    ///
    /// A native app's opening already is its launch check (``PersonaRules/launchCheck``): it asks nothing more
    /// before logging in.
    package func startCommands(resumingCode: Bool, rules: PersonaRules = .accessEnabler) -> [DeviceCommand] {
        switch self {
        case .login where !resumingCode, .cycle where !resumingCode:
            rules.launchCheck
                ? [.setRequestor(signingKeys: nil), .getAuthentication(mvpd: nil)]
                : [.setRequestor(signingKeys: nil), .checkAuthentication, .getAuthentication(mvpd: nil)]
        case .login, .idle, .cycle:
            []
        }
    }

    /// Calls the app makes in answer to a callback.
    package func reaction(to event: DeviceEvent, settings: DeviceSettings) -> [DeviceCommand] {
        guard self != .idle else { return [] }
        let mvpds: [MVPD]
        switch event {
        case .displayProviderDialog(let offered), .app(.providerPicker(let offered)): mvpds = offered
        default: return []
        }
        let pick: String?
        switch settings.loginProvider {
        case .regular, .codeFirst: pick = settings.presetMVPD ?? mvpds.first(where: { !$0.isTempPass })?.id
        case .tempPass: pick = mvpds.first(where: \.isTempPass)?.id
        }
        // Nothing to pick: the app closes the picker, which cancels the login.
        return [.setSelectedProvider(pick)]
    }
}

/// Timing of the `cycle` scenario: hold each login for `hold`, calling `getAuthorization(resource)`
/// every `authorizeEvery`, then log out and log in again.
package struct CyclePlan: Sendable, Equatable, Codable {
    package var hold: Duration
    package var authorizeEvery: Duration
    package var resource: String

    package init(hold: Duration = .seconds(600), authorizeEvery: Duration = .seconds(60), resource: String = "REF30") {
        self.hold = hold
        self.authorizeEvery = authorizeEvery
        self.resource = resource
    }
}
