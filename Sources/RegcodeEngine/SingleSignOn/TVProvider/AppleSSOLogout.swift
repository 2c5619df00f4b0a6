extension AppleSSORules {
    /// `logout` (sso.md §3.2 `logout`; DOC `[ERR]`, seed §I): `VSA203` for a token exchanged from the TV
    /// Provider account, emitted before the final `setAuthenticationStatus(0, "User Not Authenticated
    /// Error")` (order INFERRED); `nil` for any other token or none. The TV Provider account is untouched,
    /// so the app's next `setRequestor` exchanges again.
    package func logout(tokenSource: TokenSource?) -> StatusReport? {
        tokenSource == .apple ? statuses.signOutRequired : nil
    }
}
