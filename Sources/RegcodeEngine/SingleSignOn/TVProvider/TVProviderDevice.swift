/// A device's TV Provider (Apple single sign-on) as a whole: the one system account every app
/// shares, and each app's permission to use it (Settings → TV Provider). The fleet keeps it and
/// hands each app's engine its ``TVProviderState``.
package struct TVProviderDevice: Sendable, Equatable, Codable {
    package var account: TVProviderAccount
    /// Permission by app id; apps not listed have ``defaultAccess``.
    package var access: [String: TVProviderAccess]
    /// What an app's permission is until someone sets it (Apple: not determined until the prompt).
    package var defaultAccess: TVProviderAccess
    /// An injected TV Provider failure, for every app.
    package var fault: TVProviderFault?
    /// How the scenario answers Apple's picker; nil: the lab answers (`vsa.pick`).
    package var pickerAnswer: PickerAnswer?
    /// The MVPD identity provider the account signs in with (the daemon's key); never stored with the device.
    package var identityProvider: TVProviderIdentityProvider? = nil

    private enum CodingKeys: String, CodingKey {
        case account, access, defaultAccess, fault, pickerAnswer
    }

    /// The scenario's answer in Apple's picker.
    package enum PickerAnswer: Sendable, Equatable, Codable {
        /// The first provider the picker offers.
        case first
        case provider(String)
        case other
        case cancel

        /// `first`, `other`, `cancel`, or a provider's Apple id.
        package init(_ text: String) {
            switch text {
            case "first": self = .first
            case "other": self = .other
            case "cancel": self = .cancel
            default: self = .provider(text)
            }
        }

        /// The choice for a picker offering `providers` (Apple ids, in order); nil when there is none to pick.
        package func choice(offering providers: [String]) -> TVProviderChoice? {
            switch self {
            case .first: providers.first.map(TVProviderChoice.provider)
            case .provider(let id): .provider(id)
            case .other: .other
            case .cancel: .cancel
            }
        }
    }

    package init(
        account: TVProviderAccount = .signedOut,
        access: [String: TVProviderAccess] = [:],
        defaultAccess: TVProviderAccess = .notDetermined,
        fault: TVProviderFault? = nil,
        pickerAnswer: PickerAnswer? = nil
    ) {
        self.account = account
        self.access = access
        self.defaultAccess = defaultAccess
        self.fault = fault
        self.pickerAnswer = pickerAnswer
    }

    /// What app `id`'s AccessEnabler sees.
    package func state(for app: String) -> TVProviderState {
        TVProviderState(account: account, access: access[app] ?? defaultAccess, fault: fault, identityProvider: identityProvider)
    }
}
