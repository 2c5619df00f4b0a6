import AccessEnablerAPI

/// The AccessEnabler's Apple single sign-on decisions on tvOS (sso.md §3.2), as pure functions of the
/// requestor's ``AppleSSOCatalogue`` and what the app reads from VideoSubscriberAccount
/// (``TVProviderState``).
///
/// Callers own the state, the network and the callbacks: these functions only say what to emit and
/// which flow follows. INFERRED choices are fields, so a lab can move them.
package struct AppleSSORules: Sendable, Hashable {
    /// Status dictionaries (levels, messages, `restricted` → `VSA403`).
    package var statuses: AppleSSOStatuses
    /// `getAuthentication` with a valid system sign-in to a single sign-on provider of the requestor
    /// exchanges without opening the picker (INFERRED: VSA answers a metadata request without interface
    /// when the account is already signed in — APPLE; matters when the user signed in after `setRequestor`).
    package var signedInSkipsPicker: Bool
    /// A `TV_PROVIDERS` filter that leaves no provider is ignored rather than opening an empty picker
    /// (INFERRED).
    package var emptyFilterShowsAll: Bool
    /// The `setAuthenticationStatus(0, …)` code after a cancelled Apple picker: INFERRED by analogy with
    /// `setSelectedProvider(null)`.
    package var cancelledErrorCode: ErrorCode

    package init(
        statuses: AppleSSOStatuses = AppleSSOStatuses(),
        signedInSkipsPicker: Bool = true,
        emptyFilterShowsAll: Bool = true,
        cancelledErrorCode: ErrorCode = .providerNotSelected
    ) {
        self.statuses = statuses
        self.signedInSkipsPicker = signedInSkipsPicker
        self.emptyFilterShowsAll = emptyFilterShowsAll
        self.cancelledErrorCode = cancelledErrorCode
    }
}
