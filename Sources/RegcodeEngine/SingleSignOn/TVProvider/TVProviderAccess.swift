/// An app's permission to read the TV Provider account (`VSAccountAccessStatus`), per app and device
/// (APPLE, DOC `[ASSO]`; sso.md §3.2 `vsa_access`).
///
/// Raw values are the `accessStatus` strings of the `AP-Partner-Framework-Status` header (DOC `[H-PFS]`).
package enum TVProviderAccess: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user was never asked (the default for a newly installed app).
    case notDetermined
    /// The user may not grant it (e.g. parental controls).
    case restricted
    case denied
    case granted

    /// Apple's numeric `VSAccountAccessStatus` (notDetermined 0, restricted 1, denied 2, granted 3).
    package var accessStatusCode: Int {
        switch self {
        case .notDetermined: 0
        case .restricted: 1
        case .denied: 2
        case .granted: 3
        }
    }

    package var isGranted: Bool { self == .granted }
}
