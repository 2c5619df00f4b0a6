/// A cell of Adobe's TTL table for Apple single sign-on (DOC `[AOV]`; sso.md §3.2 "TTL cells").
package enum TVProviderTTLCell: Sendable, Hashable {
    /// The Adobe token is valid: authenticated for its remaining TTL, whatever Apple's sign-in says.
    case authenticated(remainingMs: Int64)
    /// Adobe expired, Apple valid: a new Adobe token with the integration's TTL at the next `setRequestor`
    /// (the second app "won't share the TTL of the first application").
    case silentReexchange
    /// Both expired: not authenticated; the picker appears on `getAuthentication`.
    case notAuthenticated
}

extension AppleSSORules {
    /// The TTL cell for the Apple sign-in `account` and the app's Adobe token expiring at `adobeNotAfter`
    /// (`nil`: no token). Only the two expiries count here; permission and mapping are
    /// ``setRequestor(catalogue:state:alreadyAuthenticated:now:)``'s concern.
    package func ttlCell(account: TVProviderAccount, adobeNotAfter: Int64?, now nowMillis: Int64) -> TVProviderTTLCell {
        if let adobeNotAfter, nowMillis < adobeNotAfter {
            return .authenticated(remainingMs: adobeNotAfter - nowMillis)
        }
        return account.isValid(at: nowMillis) ? .silentReexchange : .notAuthenticated
    }
}
