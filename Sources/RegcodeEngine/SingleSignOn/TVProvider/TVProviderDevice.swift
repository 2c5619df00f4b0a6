/// A device's TV Provider (Apple single sign-on) as a whole: the one system account every app
/// shares, and each app's permission to use it (Settings → TV Provider). The fleet keeps it and
/// hands each app's engine its ``TVProviderState``.
public struct TVProviderDevice: Sendable, Equatable, Codable {
    public var account: TVProviderAccount
    /// Permission by app id; apps not listed have ``defaultAccess``.
    public var access: [String: TVProviderAccess]
    /// What an app's permission is until someone sets it (Apple: not determined until the prompt).
    public var defaultAccess: TVProviderAccess
    /// An injected TV Provider failure (`vsa.injectFault`), for every app.
    public var fault: TVProviderFault?

    public init(
        account: TVProviderAccount = .signedOut,
        access: [String: TVProviderAccess] = [:],
        defaultAccess: TVProviderAccess = .notDetermined,
        fault: TVProviderFault? = nil
    ) {
        self.account = account
        self.access = access
        self.defaultAccess = defaultAccess
        self.fault = fault
    }

    /// What app `id`'s AccessEnabler sees.
    public func state(for app: String) -> TVProviderState {
        TVProviderState(account: account, access: access[app] ?? defaultAccess, fault: fault)
    }
}
