import AccessEnablerAPI

extension DeviceEngine {
    /// Whether the device has the requestor's MVPD list. AccessEnabler queues calls made before
    /// `setRequestor` completed; they are answered once it has.
    enum Setup: Sendable {
        /// No MVPD list yet; `failed` when the last `setRequestor` failed.
        case awaitingRequestor(pending: [DeviceCommand], failed: Bool)
        /// `setRequestor` is asking the backend (again, when the device already had a list).
        case configuring(pending: [DeviceCommand])
        /// The MVPD list is in the snapshot.
        case configured
    }

    /// Where the login is; each case carries exactly what is valid in it.
    enum LoginState: Sendable {
        case idle
        /// The provider picker is shown (`displayProviderDialog`).
        case awaitingProvider
        /// Asking for a code (or, v1, whether the backend already knows the device).
        case requestingCode(CodeRequest)
        case polling(PollLoop)
        /// Apple single sign-on: the TV Provider picker is shown (`presentTvProviderDialog`).
        case awaitingTVProvider(TVProviderPicker)
        /// Apple single sign-on: exchanging the TV Provider account for a profile.
        case exchanging(PartnerExchange)
    }

    struct PartnerExchange: Sendable {
        let id: UInt64
        var mvpd: String
        /// The silent exchange of `setRequestor`: it completes the call (and releases the calls queued
        /// behind it) whatever its outcome.
        var completesSetRequestor: Bool
    }

    struct CodeRequest: Sendable {
        let id: UInt64
        /// nil: a code-first login, whose MVPD the second screen picks.
        var mvpd: String?
        /// Codes this login replaced because the backend forgot them (bounded by `codeRecoveries`).
        var recoveries = 0
    }

    struct PollLoop: Sendable {
        let id: UInt64
        var code: IssuedCode
        var expiry: DeviceInstant
        var consecutiveErrors = 0
        /// Codes this login replaced because the backend forgot them.
        var recoveries = 0
        /// A poll is queued or in flight: never arm a second one.
        var outstanding = false
        /// When the armed poll timer fires (its planned time).
        var nextPoll: DeviceInstant?
    }
}
