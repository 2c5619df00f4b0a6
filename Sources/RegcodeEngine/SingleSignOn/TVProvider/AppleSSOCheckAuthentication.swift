extension AppleSSORules {
    /// `checkAuthentication` when the local lookup found no usable token (sso.md §3.2 `checkAuthentication`;
    /// DOC `[ASSO]` step 3): the statuses to emit before `setAuthenticationStatus(0, "User Not
    /// Authenticated Error")`.
    ///
    /// Only when the user is signed in at system level (DOC): fault → `APPL_ERROR`; permission not granted
    /// → `VSA403` / `VSA404`. Nothing for a requestor without single sign-on MVPDs (INFERRED). This call
    /// never exchanges: it does no network (DOC `[REF]`).
    package func checkAuthentication(catalogue: AppleSSOCatalogue, state: TVProviderState) -> [StatusReport] {
        guard catalogue.hasSingleSignOn, state.account.isSignedIn else { return [] }
        if let fault = state.fault { return [statuses.checkAuthenticationFault(fault)] }
        if let report = statuses.permission(state.access) { return [report] }
        return []
    }
}
