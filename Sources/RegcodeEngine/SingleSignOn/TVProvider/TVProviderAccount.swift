/// The subscriber attributes the TV Provider account hands out (the SAML attributes of the sign-in).
package struct TVProviderUser: Sendable, Hashable, Codable {
    package var userID: String
    package var householdID: String?
    package var zip: String?

    package init(userID: String, householdID: String? = nil, zip: String? = nil) {
        self.userID = userID
        self.householdID = householdID
        self.zip = zip
    }
}

/// The device's TV Provider account (Settings → Accounts → TV Provider): one per device, shared by every
/// app — that sharing is Apple's single sign-on (APPLE, DOC `[ASSO]`; sso.md §3.2 `vsa_account`).
package struct TVProviderAccount: Sendable, Hashable, Codable {
    /// The signed-in provider as Apple names it (`accountProviderIdentifier`, an MVPD's
    /// `platformMappingId`), or `nil` when nobody is signed in.
    package var providerID: String?
    package var user: TVProviderUser?
    /// `authenticationExpirationDate`, epoch milliseconds; the sign-in is expired from this instant on.
    package var expiresEpochMs: Int64

    package init(providerID: String?, user: TVProviderUser? = nil, expiresEpochMs: Int64) {
        self.providerID = providerID
        self.user = user
        self.expiresEpochMs = expiresEpochMs
    }

    /// Nobody signed in at system level.
    package static let signedOut = TVProviderAccount(providerID: nil, user: nil, expiresEpochMs: 0)

    /// Someone is signed in at system level, expired or not (what `checkAuthentication`'s VSA codes need).
    package var isSignedIn: Bool { providerID != nil }

    /// Signed in and the Apple sign-in not yet expired (the "Apple device token valid" row of the TTL table).
    package func isValid(at nowMillis: Int64) -> Bool {
        isSignedIn && nowMillis < expiresEpochMs
    }
}

/// Where an authentication token came from, as `getMetadata` `tokenSource` reports it (DOC `[ASSO]`).
package enum TokenSource: String, Sendable, Hashable, Codable {
    /// Exchanged from the TV Provider account (silent exchange or the Apple picker).
    case apple = "Apple"
    /// Any regular Adobe flow (registration code, including a picker-only provider).
    case adobe = "Adobe"

    /// The `setMetadataStatus` value for `user_metadata_name: "tokenSource"`: `"Apple"` for Apple tokens,
    /// `nil` (JSON null) otherwise — INFERRED, the docs define only the Apple value.
    package var userMetadataValue: String? {
        self == .apple ? rawValue : nil
    }
}
