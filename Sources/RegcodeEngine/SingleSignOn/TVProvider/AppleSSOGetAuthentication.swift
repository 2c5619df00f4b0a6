/// How `getAuthentication` proceeds for an app that is not authenticated.
package enum TVProviderAuthenticationOutcome: Sendable, Equatable {
    /// No single sign-on MVPD: the classic tvOS flow (`displayProviderDialog`, registration code) — SEED §E.
    case classic
    /// Emit this status (`VSA403`, `VSA404`, `VSA503`), then `displayProviderDialog` (DOC `[ASSO]` step 4).
    case statusThenProviderDialog(StatusReport)
    /// `presentTvProviderDialog` with this picker, then wait for the user's ``TVProviderChoice``.
    case presentPicker(TVProviderPicker)
    /// Already signed in at system level to a single sign-on provider of the requestor: exchange without
    /// the picker, then `setAuthenticationStatus(1, "")` (``AppleSSORules/signedInSkipsPicker``, INFERRED).
    case silentExchange(MVPD)

    /// The statuses to emit (for ``TVProviderState/consumeFault(reportedIn:)``).
    package var statuses: [StatusReport] {
        if case .statusThenProviderDialog(let report) = self { [report] } else { [] }
    }
}

extension AppleSSORules {
    /// `getAuthentication[:filter]` when the app is not authenticated (sso.md §3.2 `getAuthentication`;
    /// DOC `[ASSO]` step 4, `[REF]` filter):
    ///
    /// 1. no single sign-on MVPD → classic flow, the filter ignored (DOC);
    /// 2. fault → `VSA503` + `displayProviderDialog` (DOC);
    /// 3. permission not granted → `VSA403` / `VSA404` + `displayProviderDialog` (DOC);
    /// 4. valid sign-in to a single sign-on MVPD → silent exchange (INFERRED, ``signedInSkipsPicker``);
    /// 5. else Apple's picker, restricted by `filter` (``picker(catalogue:filter:)``); an empty picker →
    ///    classic flow (INFERRED).
    package func getAuthentication(
        catalogue: AppleSSOCatalogue,
        state: TVProviderState,
        filter: TVProviderFilter = .none,
        now nowMillis: Int64
    ) -> TVProviderAuthenticationOutcome {
        guard catalogue.hasSingleSignOn else { return .classic }
        if let fault = state.fault { return .statusThenProviderDialog(statuses.getAuthenticationFault(fault)) }
        if let report = statuses.permission(state.access) { return .statusThenProviderDialog(report) }
        if signedInSkipsPicker, let mvpd = signedInSingleSignOnMVPD(catalogue, state.account, nowMillis) {
            return .silentExchange(mvpd)
        }
        let picker = picker(catalogue: catalogue, filter: filter)
        return picker.providers.isEmpty ? .classic : .presentPicker(picker)
    }

    /// Apple's picker for `filter` (DOC `[REF]` `getAuthentication:filter`):
    /// * `TV_PROVIDERS`: MVPD ids to show, in the filter's order; ids that are not picker MVPDs
    ///   (``AppleSSOCatalogue/pickerMVPDs``) are ignored (DOC "non-SSO ones ignored"), duplicates kept once.
    ///   Absent → every picker MVPD in configuration order. Nothing left → all of them
    ///   (``emptyFilterShowsAll``, INFERRED) or an empty picker.
    /// * `FEATURED_TV_PROVIDERS`: the shown MVPDs to feature, in the filter's order; others ignored.
    package func picker(catalogue: AppleSSOCatalogue, filter: TVProviderFilter) -> TVProviderPicker {
        let all = catalogue.pickerMVPDs
        func select(_ ids: [String], from pool: [MVPD]) -> [MVPD] {
            var seen: Set<String> = []
            return ids.compactMap { id in
                guard !seen.contains(id), let mvpd = pool.first(where: { $0.id == id }) else { return nil }
                seen.insert(id)
                return mvpd
            }
        }
        var providers = filter.providers.map { select($0, from: all) } ?? all
        if providers.isEmpty && emptyFilterShowsAll { providers = all }
        let featured = filter.featured.map { select($0, from: providers) } ?? []
        return TVProviderPicker(providers: providers, featured: featured)
    }
}
