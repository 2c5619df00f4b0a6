/// What basic v2 profiles are bound to.
package enum V2ProfileScope: String, Sendable, Hashable, Codable, CaseIterable {
    /// Device and DCR client, as Adobe binds them (FAQ 13): two apps on one device share nothing without SSO.
    case deviceAndClient = "device+client"
    /// Device only: every app of a device sees the device's profiles. Not faithful to Adobe; for labs.
    case device
}
