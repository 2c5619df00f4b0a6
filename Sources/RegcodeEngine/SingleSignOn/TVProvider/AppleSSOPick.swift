import AccessEnablerAPI

/// The user's answer in Apple's TV Provider picker (`vsa.pick`).
package enum TVProviderChoice: Sendable, Hashable {
    /// A provider, by Apple's id (an MVPD's `platformMappingId`).
    case provider(String)
    /// "Other TV Provider".
    case other
    case cancel
}

/// What follows `dismissTvProviderDialog` after the user answered the picker.
package enum TVProviderPickOutcome: Sendable, Equatable {
    /// Exchange Apple's token for this MVPD, then `setAuthenticationStatus(1, "")` and tracking
    /// (`tokenSource = "Apple"`). `signsIn`: the picker signed the user in at system level first (the
    /// caller updates the device's ``TVProviderAccount``).
    case exchange(MVPD, signsIn: Bool)
    /// A picker-only provider (VSA error 1 with `VSErrorInfoKeyUnsupportedProviderIdentifier`): silent
    /// `setSelectedProvider(mvpd)` and the registration-code flow, no status, VSA stays signed out
    /// (`[KB-16609]`: `sendTrackingData(2)` → `status REGCODE` → polling; `tokenSource = "Adobe"`).
    case pickerOnly(MVPD)
    /// Emit `N004`, then `displayProviderDialog`.
    case unsupported(StatusReport)
    /// Emit `N003`, then `displayProviderDialog`.
    case other(StatusReport)
    /// Emit `N005`, then `setAuthenticationStatus(0, errorCode)`.
    case cancelled(StatusReport, errorCode: ErrorCode)

    /// The statuses to emit after `dismissTvProviderDialog`.
    package var statuses: [StatusReport] {
        switch self {
        case .exchange, .pickerOnly: []
        case .unsupported(let report), .other(let report), .cancelled(let report, _): [report]
        }
    }
}

extension AppleSSORules {
    /// The picker's answer (sso.md §3.2 `getAuthentication` outcomes; DOC `[ASSO]` step 4, `[KB-16609]`):
    /// * single sign-on provider of the requestor → exchange (signing in unless already validly signed in
    ///   to that provider);
    /// * picker-only provider (`PICKER`, `displayInPlatformPicker`, not onboarded) → registration code;
    /// * provider onboarded but single sign-on off for the requestor, or not integrated → `N004`;
    /// * "Other TV Provider" → `N003`; cancel → `N005` + ``cancelledErrorCode`` (INFERRED).
    ///
    /// The caller checks that a picker is open and offers the provider (``TVProviderPicker/offers(providerID:)``).
    package func pick(
        _ choice: TVProviderChoice,
        catalogue: AppleSSOCatalogue,
        account: TVProviderAccount,
        now nowMillis: Int64
    ) -> TVProviderPickOutcome {
        switch choice {
        case .cancel:
            return .cancelled(statuses.cancelled, errorCode: cancelledErrorCode)
        case .other:
            return .other(statuses.otherProvider)
        case .provider(let providerID):
            switch catalogue.role(ofProvider: providerID) {
            case .singleSignOn(let mvpd):
                let alreadySignedIn = account.providerID == providerID && account.isValid(at: nowMillis)
                return .exchange(mvpd, signsIn: !alreadySignedIn)
            case .pickerOnly(let mvpd):
                return .pickerOnly(mvpd)
            case .singleSignOnDisabled, .notIntegrated:
                return .unsupported(statuses.notSupported)
            }
        }
    }
}
