import AccessEnablerAPI
import RegcodeSupport

/// The advanced-status dictionaries of Apple single sign-on (sso.md §3.2 "Status dictionaries").
///
/// Levels are DOC `[ERR]` except VSA403's (INFERRED `info`, a field). Adobe documents no `message`
/// strings for these ids: the defaults are the docs' descriptions (INFERRED), fields so a lab can match an
/// app's expectations.
package struct AppleSSOStatuses: Sendable, Hashable {
    /// The ids that report an injected fault (what spends a `once` fault).
    package static let faultIDs: Set<StatusID> = [.appleSSOError, .appleSSOAuthenticationError, .tvProviderUnavailable]

    /// `VSA403`'s level: INFERRED `info` (the id is missing from `[ERR]`'s table).
    package var accessDeniedLevel: StatusLevel
    /// What `restricted` permission reports: INFERRED `VSA403`, like `denied`.
    package var restrictedStatus: StatusID
    package var signOutRequiredMessage: String
    package var accessDeniedMessage: String
    package var accessUndeterminedMessage: String
    /// `VSA503`'s message, followed by ": " and the fault's description (DOC: context in `message`).
    package var unavailableMessage: String
    package var appleErrorMessage: String
    package var otherProviderMessage: String
    package var notSupportedMessage: String
    /// `N005`: the JS SDK's message, the one regcoded already sends for a cancelled MVPD picker.
    package var cancelledMessage: String

    package init(
        accessDeniedLevel: StatusLevel = .info,
        restrictedStatus: StatusID = .tvProviderAccessDenied,
        signOutRequiredMessage: String =
            "User logged out of the application, but is still signed in to the TV provider at system level.",
        accessDeniedMessage: String = "Application Video Subscriber Account permission is denied.",
        accessUndeterminedMessage: String = "Application Video Subscriber Account permission is undetermined.",
        unavailableMessage: String = "Video Subscriber Account metadata request failed",
        appleErrorMessage: String = "Video Subscriber Account error.",
        otherProviderMessage: String = "User selected Other TV Provider in the TV provider picker.",
        notSupportedMessage: String = "The selected TV provider is not supported by this application.",
        cancelledMessage: String = "authentication cancelled"
    ) {
        self.accessDeniedLevel = accessDeniedLevel
        self.restrictedStatus = restrictedStatus
        self.signOutRequiredMessage = signOutRequiredMessage
        self.accessDeniedMessage = accessDeniedMessage
        self.accessUndeterminedMessage = accessUndeterminedMessage
        self.unavailableMessage = unavailableMessage
        self.appleErrorMessage = appleErrorMessage
        self.otherProviderMessage = otherProviderMessage
        self.notSupportedMessage = notSupportedMessage
        self.cancelledMessage = cancelledMessage
    }

    /// `VSA403` (denied; restricted per ``restrictedStatus``) or `VSA404` (notDetermined); `nil` when granted.
    package func permission(_ access: TVProviderAccess) -> StatusReport? {
        let id: StatusID
        switch access {
        case .granted: return nil
        case .notDetermined: id = .tvProviderAccessUndetermined
        case .denied: id = .tvProviderAccessDenied
        case .restricted: id = restrictedStatus
        }
        if id == .tvProviderAccessUndetermined {
            return StatusReport(id: id, level: .info, message: accessUndeterminedMessage, extra: [:])
        }
        return StatusReport(id: id, level: accessDeniedLevel, message: accessDeniedMessage, extra: [:])
    }

    /// `APPL`, error, `details` = the VSA error (`setRequestor`, DOC `[ASSO]` step 2).
    package func setRequestorFault(_ fault: TVProviderFault) -> StatusReport {
        appleError(.appleSSOError, fault)
    }

    /// `APPL_ERROR`, error, `details` = the VSA error (`checkAuthentication`, DOC `[ASSO]` step 3).
    package func checkAuthenticationFault(_ fault: TVProviderFault) -> StatusReport {
        appleError(.appleSSOAuthenticationError, fault)
    }

    /// `VSA503`, info, the fault as context in `message` (`getAuthentication`, DOC `[ASSO]` step 4, `[ERR]`).
    package func getAuthenticationFault(_ fault: TVProviderFault) -> StatusReport {
        StatusReport(
            id: .tvProviderUnavailable,
            level: .info,
            message: "\(unavailableMessage): \(fault.kind.description)",
            extra: [:]
        )
    }

    /// `VSA203`, info (`logout` of an Apple token, DOC `[ERR]`, seed §I).
    package var signOutRequired: StatusReport {
        StatusReport(id: .tvProviderSignOutRequired, level: .info, message: signOutRequiredMessage, extra: [:])
    }

    /// `N003`, info ("Other TV Provider").
    package var otherProvider: StatusReport {
        StatusReport(id: .otherTVProviderSelected, level: .info, message: otherProviderMessage, extra: [:])
    }

    /// `N004`, info (provider not supported by this requestor).
    package var notSupported: StatusReport {
        StatusReport(id: .tvProviderNotSupported, level: .info, message: notSupportedMessage, extra: [:])
    }

    /// `N005`, info (picker cancelled).
    package var cancelled: StatusReport {
        StatusReport(id: .providerSelectionCancelled, level: .info, message: cancelledMessage, extra: [:])
    }

    private func appleError(_ id: StatusID, _ fault: TVProviderFault) -> StatusReport {
        StatusReport(id: id, level: .error, message: appleErrorMessage, extra: ["details": .string(fault.details)])
    }
}
