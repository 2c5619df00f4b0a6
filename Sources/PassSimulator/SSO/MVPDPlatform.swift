/// The platform (partner SSO) fields of an MVPD, as `GET /configuration` publishes them (sso.md §2.5).
///
/// Kept apart from ``SimulatedMVPD`` because the admin API (`PUT /_sim/mvpds/{mvpd}`) replaces them at runtime and
/// the state file keeps the replacement.
package struct MVPDPlatform: Sendable, Hashable, Codable {
    /// The identifier the platform knows the MVPD by (Apple's `accountProviderIdentifier`).
    package var platformMappingId: String?
    /// Whether and how the platform onboarded the MVPD; `nil`: not at all.
    package var boardingStatus: BoardingStatus?
    /// Whether the app should use the platform's services (VideoSubscriberAccount) for this MVPD.
    package var enablePlatformServices: Bool
    /// Whether the MVPD appears in the platform's own picker.
    package var displayInPlatformPicker: Bool
    /// Whether the user's platform permission must be granted; `false` skips the permission part of the
    /// `AP-Partner-Framework-Status` checks (INFERRED from the field's description, sso.md §3.3).
    package var enforcePlatformPermissions: Bool
    /// SAML attributes the partner must return; empty asks for `uid`, `NameID`, `uniqueId` (Adobe's sample).
    package var requiredMetadataFields: [String]

    /// Platform fields; the defaults describe an MVPD no platform onboarded.
    package init(
        platformMappingId: String? = nil,
        boardingStatus: BoardingStatus? = nil,
        enablePlatformServices: Bool = false,
        displayInPlatformPicker: Bool = false,
        enforcePlatformPermissions: Bool = true,
        requiredMetadataFields: [String] = []
    ) {
        self.platformMappingId = platformMappingId
        self.boardingStatus = boardingStatus
        self.enablePlatformServices = enablePlatformServices
        self.displayInPlatformPicker = displayInPlatformPicker
        self.enforcePlatformPermissions = enforcePlatformPermissions
        self.requiredMetadataFields = requiredMetadataFields
    }

    private enum CodingKeys: String, CodingKey {
        case platformMappingId, boardingStatus, enablePlatformServices, displayInPlatformPicker, enforcePlatformPermissions
        case requiredMetadataFields
    }

    /// Missing fields take the defaults, so a partial object (config file, admin `PUT`) is complete.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.platformMappingId = try container.decodeIfPresent(String.self, forKey: .platformMappingId)
        self.boardingStatus = try container.decodeIfPresent(BoardingStatus.self, forKey: .boardingStatus)
        self.enablePlatformServices = try container.decodeIfPresent(Bool.self, forKey: .enablePlatformServices) ?? false
        self.displayInPlatformPicker = try container.decodeIfPresent(Bool.self, forKey: .displayInPlatformPicker) ?? false
        self.enforcePlatformPermissions = try container.decodeIfPresent(Bool.self, forKey: .enforcePlatformPermissions) ?? true
        self.requiredMetadataFields = try container.decodeIfPresent([String].self, forKey: .requiredMetadataFields) ?? []
    }

    /// The SAML attributes asked of the partner (`authenticationRequest.attributesNames`).
    var attributesNames: [String] {
        self.requiredMetadataFields.isEmpty ? ["uid", "NameID", "uniqueId"] : self.requiredMetadataFields
    }

    /// Whether the partner (Apple) flow can run for this MVPD at all.
    var supportsPartnerSSO: Bool {
        self.boardingStatus == .supported && self.enablePlatformServices && self.platformMappingId != nil
    }
}
