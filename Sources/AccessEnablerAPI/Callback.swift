/// The AccessEnabler callbacks a device fires, by their iOS/tvOS names (the `name` of an event on
/// the socket and in the `events` table).
package enum Callback: String, Sendable, CaseIterable, Codable {
    case setRequestorComplete
    case setAuthenticationStatus
    case displayProviderDialog
    case selectedProvider
    /// The advanced-status callback (`status:`), carrying a ``StatusID``.
    case status
    case sendTrackingData
    case setToken
    case tokenRequestFailed
    case preauthorizedResources
    case setMetadataStatus
    /// `presentTvProviderDialog:` (AccessEnabler 2.0+): show Apple's TV Provider picker (the
    /// VideoSubscriberAccount view controller), fired by `getAuthentication` when the requestor has at
    /// least one MVPD onboarded for Apple single sign-on.
    case presentTvProviderDialog
    /// `dismissTvProviderDialog:` (AccessEnabler 2.0+): hide that picker again, after the user picked a
    /// provider, chose "Other TV Provider" or cancelled.
    case dismissTvProviderDialog
    /// `navigateToUrl:` (iOS): load the MVPD login URL in a web view. An iOS AccessEnabler shows no
    /// registration code: where tvOS reports `status` `REGCODE`, iOS calls this instead.
    case navigateToUrl
}
