/// The AccessEnabler callbacks a device fires, by their iOS/tvOS names (the `name` of an event on
/// the socket and in the `events` table).
public enum Callback: String, Sendable, CaseIterable, Codable {
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
}
