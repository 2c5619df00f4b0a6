/// A requestor's MVPDs as Apple single sign-on sees them, built from its configuration (sso.md §3.2
/// `setRequestor` step 1, catalogue; DOC `[API-CONF]`, `[AOV]` onboarding matrix).
package struct AppleSSOCatalogue: Sendable, Equatable {
    /// How a provider picked in Apple's picker relates to this requestor.
    package enum Role: Sendable, Equatable {
        /// Onboarded (`SUPPORTED`) and single sign-on enabled: Apple's token is exchanged.
        case singleSignOn(MVPD)
        /// In Apple's picker, but authentication is Adobe's (`PICKER`, `displayInPlatformPicker`, or not
        /// onboarded at all): the regular flow with this MVPD preselected (DOC `[ASSO]`, `[KB-16609]`).
        case pickerOnly(MVPD)
        /// Onboarded by Apple, but single sign-on is off for this requestor (`enablePlatformServices`
        /// false): `N004` (DOC `[ASSO]` "integration or SSO disabled").
        case singleSignOnDisabled(MVPD)
        /// No MVPD of this requestor carries that provider id: `N004`.
        case notIntegrated
    }

    /// The configuration's MVPDs, in its order.
    package let mvpds: [MVPD]
    /// `enablePlatformServices` and `boardingStatus = SUPPORTED` (sso.md §3.2 step 1 `ssoMvpds`).
    package let ssoMVPDs: [MVPD]
    /// What Apple's picker may show: MVPDs with a `platformMappingId` that are `SUPPORTED`, `PICKER` or
    /// `displayInPlatformPicker` (Apple identifies providers only by that id).
    package let pickerMVPDs: [MVPD]
    private let byProviderID: [String: MVPD]

    package init(mvpds: [MVPD]) {
        self.mvpds = mvpds
        ssoMVPDs = mvpds.filter(Self.isSingleSignOn)
        pickerMVPDs = mvpds.filter { mvpd in
            mvpd.platformMappingId != nil
                && (mvpd.boardingStatus != nil || mvpd.displayInPlatformPicker)
        }
        var map: [String: MVPD] = [:]
        // Two MVPDs claiming one provider id is a configuration error; the first listed wins.
        for mvpd in mvpds {
            if let id = mvpd.platformMappingId, map[id] == nil { map[id] = mvpd }
        }
        byProviderID = map
    }

    /// The MVPD takes part in Apple single sign-on for this requestor.
    package static func isSingleSignOn(_ mvpd: MVPD) -> Bool {
        mvpd.enablePlatformServices && mvpd.boardingStatus == .supported
    }

    /// At least one single sign-on MVPD: without one nothing Apple-related happens (INFERRED for the
    /// status codes; SEED §E for the classic flow).
    package var hasSingleSignOn: Bool { !ssoMVPDs.isEmpty }

    /// The MVPD Apple's provider id maps to (`platformMappingId` → MVPD).
    package func mvpd(forProvider providerID: String) -> MVPD? {
        byProviderID[providerID]
    }

    /// The Apple provider id of an MVPD (MVPD → `platformMappingId`).
    package func providerID(forMVPD mvpdID: String) -> String? {
        mvpds.first { $0.id == mvpdID }?.platformMappingId
    }

    /// What picking (or being signed in to) `providerID` means for this requestor.
    package func role(ofProvider providerID: String) -> Role {
        guard let mvpd = byProviderID[providerID] else { return .notIntegrated }
        if Self.isSingleSignOn(mvpd) { return .singleSignOn(mvpd) }
        if mvpd.boardingStatus == .supported { return .singleSignOnDisabled(mvpd) }
        return .pickerOnly(mvpd)
    }
}
