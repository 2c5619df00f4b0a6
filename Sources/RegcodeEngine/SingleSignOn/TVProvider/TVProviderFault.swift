import AccessEnablerAPI

/// A failure injected into the device's VideoSubscriberAccount (sso.md §3.2 `vsa_faults`, `vsa.injectFault`).
///
/// While set, every VSA request of the affected app fails: `setRequestor` reports `APPL`,
/// `checkAuthentication` `APPL_ERROR` (signed in only), `getAuthentication` `VSA503`. A ``once`` fault is
/// spent by the first decision that reports it (``TVProviderState/consumeFault(reportedIn:)``).
package struct TVProviderFault: Sendable, Hashable, Codable {
    /// What went wrong: Apple's `VSErrorCode` values, plus the two ways a request "succeeds" without
    /// what the AccessEnabler needs.
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case accessNotGranted
        /// The provider is not in the request's supported list (carries the provider id at Apple).
        case unsupportedProvider
        case userCancelled
        case serviceTemporarilyUnavailable
        case providerRejected
        case invalidVerificationToken
        /// Newer SDKs; numeric value 6 INFERRED.
        case rejected
        /// Newer SDKs; numeric value 7 INFERRED.
        case unsupported
        /// The request answered without account metadata (no provider id).
        case noMetadata
        /// The metadata lacks the SAML attribute query response the exchange needs.
        case noSAMLResponse

        /// `VSErrorCode` in `VSErrorDomain` (APPLE; 6 and 7 INFERRED), `nil` for the two non-errors.
        package var code: Int? {
            switch self {
            case .accessNotGranted: 0
            case .unsupportedProvider: 1
            case .userCancelled: 2
            case .serviceTemporarilyUnavailable: 3
            case .providerRejected: 4
            case .invalidVerificationToken: 5
            case .rejected: 6
            case .unsupported: 7
            case .noMetadata, .noSAMLResponse: nil
            }
        }

        /// A one-line description in the spirit of Apple's `localizedDescription` (wording INFERRED).
        package var description: String {
            switch self {
            case .accessNotGranted: "The user has not granted access to the TV provider account."
            case .unsupportedProvider: "The TV provider is not supported."
            case .userCancelled: "The user cancelled the request."
            case .serviceTemporarilyUnavailable: "The TV provider service is temporarily unavailable."
            case .providerRejected: "The TV provider rejected the request."
            case .invalidVerificationToken: "The verification token is invalid."
            case .rejected: "The request was rejected."
            case .unsupported: "The request is not supported."
            case .noMetadata: "No account metadata was returned."
            case .noSAMLResponse: "The account metadata has no SAML attribute query response."
            }
        }
    }

    package var kind: Kind
    /// Fail the next reporting decision only, then disappear (`vsa.injectFault {once: true}`).
    package var once: Bool

    package init(_ kind: Kind, once: Bool = false) {
        self.kind = kind
        self.once = once
    }

    /// The original VSA error as `APPL`/`APPL_ERROR` `details` carry it: `"VSErrorDomain <code>:
    /// <description>"` (INFERRED format); the non-errors say `"VSAccountMetadata: <description>"`.
    package var details: String {
        if let code = kind.code { "VSErrorDomain \(code): \(kind.description)" } else { "VSAccountMetadata: \(kind.description)" }
    }

    /// The fault still in place after it was reported once.
    package var remainingAfterUse: TVProviderFault? { once ? nil : self }
}

/// What one app reads from VideoSubscriberAccount at the moment of a decision.
package struct TVProviderState: Sendable, Hashable {
    /// The device-wide account.
    package var account: TVProviderAccount
    /// This app's permission.
    package var access: TVProviderAccess
    /// An injected failure for this app, if any.
    package var fault: TVProviderFault?
    /// The identity provider that answers the SAML request for the signed-in account; nil: none is emulated, so an
    /// exchange fails as a TV Provider error.
    package var identityProvider: TVProviderIdentityProvider?

    package init(
        account: TVProviderAccount,
        access: TVProviderAccess,
        fault: TVProviderFault? = nil,
        identityProvider: TVProviderIdentityProvider? = nil
    ) {
        self.account = account
        self.access = access
        self.fault = fault
        self.identityProvider = identityProvider
    }

    /// Spends a ``TVProviderFault/once`` fault if `statuses` report it (`APPL`, `APPL_ERROR`, `VSA503`).
    package mutating func consumeFault(reportedIn statuses: [StatusReport]) {
        let reported = statuses.contains { AppleSSOStatuses.faultIDs.contains($0.id) }
        if reported { fault = fault?.remainingAfterUse }
    }
}
