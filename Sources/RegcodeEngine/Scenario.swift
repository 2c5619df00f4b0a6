/// The app's part of a device: which AccessEnabler calls it makes on its own.
public enum Scenario: String, Sendable, Codable, CaseIterable {
    /// Log in once: `setRequestor`, `checkAuthentication`, `getAuthentication`, and answer the
    /// provider picker with the configured MVPD (else the first offered).
    case login
    /// Only act on commands from the control socket.
    case idle

    /// Calls made when the device starts. A device that resumes a pending code makes none:
    /// the resumed poll loop is already doing the app's work.
    public func startCommands(resumingCode: Bool) -> [DeviceCommand] {
        switch self {
        case .login where !resumingCode:
            [.setRequestor(signingKeys: nil), .checkAuthentication, .getAuthentication(mvpd: nil)]
        case .login, .idle:
            []
        }
    }

    /// Calls the app makes in answer to a callback.
    public func reaction(to event: DeviceEvent, settings: DeviceSettings) -> [DeviceCommand] {
        guard self == .login, event.name == "displayProviderDialog" else { return [] }
        let offered = event.args["mvpds"]?.arrayValue?.compactMap { $0["ID"]?.stringValue } ?? []
        if let preset = settings.presetMVPD { return [.setSelectedProvider(preset)] }
        if let first = offered.first { return [.setSelectedProvider(first)] }
        // Nothing to pick: the app closes the picker, which cancels the login.
        return [.setSelectedProvider(nil)]
    }
}
