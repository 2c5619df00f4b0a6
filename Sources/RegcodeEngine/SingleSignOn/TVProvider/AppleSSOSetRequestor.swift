/// What Apple single sign-on adds to `setRequestor`, before `setRequestorComplete(1)`.
package enum TVProviderSetRequestorOutcome: Sendable, Equatable {
    /// Nothing Apple-related.
    case none
    /// Emit this status (`VSA403`, `VSA404` or `APPL`), then `setRequestorComplete` as usual.
    case status(StatusReport)
    /// Exchange the TV Provider sign-in for an Adobe token for this MVPD without any callback
    /// (`tokenSource = "Apple"`, the integration's own TTL — DOC `[AOV]`); `setRequestorComplete` only.
    case silentExchange(MVPD)

    /// The statuses to emit (for ``TVProviderState/consumeFault(reportedIn:)``).
    package var statuses: [StatusReport] {
        if case .status(let report) = self { [report] } else { [] }
    }
}

extension AppleSSORules {
    /// `setRequestor` (sso.md §3.2 `setRequestor` steps 2–4; DOC `[ASSO]` step 2):
    ///
    /// 1. no single sign-on MVPD → ``TVProviderSetRequestorOutcome/none`` (INFERRED: no VSA codes then);
    /// 2. fault → `APPL` (DOC);
    /// 3. permission not granted → `VSA403` / `VSA404` (DOC; restricted → 403 INFERRED);
    /// 4. signed in, not expired, provider maps to a single sign-on MVPD of the requestor, and the app not
    ///    already authenticated (TTL table: a valid Adobe token keeps its remaining TTL, DOC `[AOV]`) →
    ///    silent exchange (DOC). Integration enabled / not degraded / SAML obtained are the exchange's own
    ///    outcome, decided by the backend, not here.
    ///
    /// `alreadyAuthenticated`: the local lookup (sso.md §3.1) found a usable token.
    package func setRequestor(
        catalogue: AppleSSOCatalogue,
        state: TVProviderState,
        alreadyAuthenticated: Bool,
        now nowMillis: Int64
    ) -> TVProviderSetRequestorOutcome {
        guard catalogue.hasSingleSignOn else { return .none }
        if let fault = state.fault { return .status(statuses.setRequestorFault(fault)) }
        if let report = statuses.permission(state.access) { return .status(report) }
        guard !alreadyAuthenticated, let mvpd = signedInSingleSignOnMVPD(catalogue, state.account, nowMillis) else {
            return .none
        }
        return .silentExchange(mvpd)
    }

    /// The requestor's single sign-on MVPD of a valid system sign-in, if any.
    func signedInSingleSignOnMVPD(
        _ catalogue: AppleSSOCatalogue,
        _ account: TVProviderAccount,
        _ nowMillis: Int64
    ) -> MVPD? {
        guard account.isValid(at: nowMillis), let providerID = account.providerID,
            case .singleSignOn(let mvpd) = catalogue.role(ofProvider: providerID)
        else { return nil }
        return mvpd
    }
}
