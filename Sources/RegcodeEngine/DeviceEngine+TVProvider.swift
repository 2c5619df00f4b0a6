import AccessEnablerAPI
import RegcodeSupport

/// Apple single sign-on on tvOS (cookbook flow E, sso.md §3.2): the TV Provider account decides
/// `setRequestor`'s silent exchange, the statuses of `checkAuthentication`, and whether
/// `getAuthentication` shows Apple's picker; an exchange turns the account into an `appleSSO`
/// profile through the REST v2 partner endpoints.
extension DeviceEngine {
    /// What the fleet reports about the device's TV Provider account and this app's permission.
    package mutating func tvProviderChanged(_ state: TVProviderState?) {
        tvProvider = state
    }

    /// Whether Apple's picker is open and waits for the user's choice.
    package var isPresentingTVProvider: Bool {
        if case .awaitingTVProvider = login { return true }
        return false
    }

    enum TVProviderAtSetRequestor {
        case nothing
        case status(StatusReport)
        case exchange(String)
    }

    private var catalogue: AppleSSOCatalogue { AppleSSOCatalogue(mvpds: snapshot.mvpds ?? []) }

    /// Spends a `once` fault the statuses just reported.
    private mutating func spendFault(_ statuses: [StatusReport]) {
        tvProvider?.consumeFault(reportedIn: statuses)
    }

    mutating func tvProviderAtSetRequestor() -> TVProviderAtSetRequestor {
        guard let state = tvProvider else { return .nothing }
        switch appleRules.setRequestor(catalogue: catalogue, state: state, alreadyAuthenticated: isAuthenticated, now: clock.epochMillisecondsNow) {
        case .none: return .nothing
        case .status(let report):
            spendFault([report])
            return .status(report)
        case .silentExchange(let mvpd): return .exchange(mvpd.id)
        }
    }

    mutating func tvProviderStatusesAtCheckAuthentication() -> [Action] {
        guard let state = tvProvider, !isAuthenticated else { return [] }
        let statuses = appleRules.checkAuthentication(catalogue: catalogue, state: state)
        spendFault(statuses)
        return statuses.map { .emit(.status($0)) }
    }

    /// `getAuthentication` of an app that is not authenticated; nil: the classic picker and code flow.
    mutating func tvProviderAtGetAuthentication() -> [Action]? {
        guard let state = tvProvider else { return nil }
        switch appleRules.getAuthentication(catalogue: catalogue, state: state, filter: TVProviderFilter(), now: clock.epochMillisecondsNow) {
        case .classic:
            return nil
        case .statusThenProviderDialog(let report):
            spendFault([report])
            var actions = stopLogin(endingCodeAs: .replaced)
            snapshot.renewals = 0
            login = .awaitingProvider
            actions.append(.emit(.status(report)))
            actions.append(.emit(.displayProviderDialog(snapshot.mvpds ?? [])))
            return actions
        case .presentPicker(let picker):
            var actions = stopLogin(endingCodeAs: .replaced)
            snapshot.renewals = 0
            login = .awaitingTVProvider(picker)
            actions.append(.emit(.presentTvProviderDialog(picker.viewController)))
            return actions
        case .silentExchange(let mvpd):
            var actions = stopLogin(endingCodeAs: .replaced)
            actions += startExchange(mvpd: mvpd.id, completesSetRequestor: false)
            return actions
        }
    }

    /// The user's answer in Apple's picker; ignored when no picker is open (the fleet refuses it first).
    mutating func selectTVProvider(_ choice: TVProviderChoice) -> [Action] {
        guard case .awaitingTVProvider(let picker) = login, let account = tvProvider?.account else { return [] }
        login = .idle
        var actions: [Action] = [.emit(.dismissTvProviderDialog(picker.viewController))]
        switch appleRules.pick(choice, catalogue: catalogue, account: account, now: clock.epochMillisecondsNow) {
        case .exchange(let mvpd, _):
            actions += startExchange(mvpd: mvpd.id, completesSetRequestor: false)
        case .pickerOnly(let mvpd):
            // KB-16609: the AccessEnabler selects the provider itself and runs the code flow.
            actions += selectProvider(mvpd.id)
        case .unsupported(let report), .other(let report):
            login = .awaitingProvider
            actions.append(.emit(.status(report)))
            actions.append(.emit(.displayProviderDialog(snapshot.mvpds ?? [])))
        case .cancelled(let report, let errorCode):
            actions.append(.emit(.status(report)))
            actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, errorCode)))
            actions += failPendingAuthorizations()
        }
        return actions
    }

    // MARK: The exchange

    mutating func startExchange(mvpd: String, completesSetRequestor: Bool) -> [Action] {
        let id = nextLoginID()
        login = .exchanging(PartnerExchange(id: id, mvpd: mvpd, completesSetRequestor: completesSetRequestor))
        snapshot.selectedMVPD = mvpd
        return enqueue(.partnerSession(mvpd: mvpd, login: id))
    }

    private func exchange(_ id: UInt64) -> PartnerExchange? {
        guard case .exchanging(let exchange) = login, exchange.id == id else { return nil }
        return exchange
    }

    mutating func partnerSessionFinished(
        _ result: Result<BackendResponse, BackendFailure>,
        mvpd: String,
        login id: UInt64,
        stage: Stage
    ) -> [Action] {
        guard let exchange = exchange(id) else { return [] }
        switch result {
        case .success(.partnerAuthenticationRequest(let request)):
            guard let provider = tvProvider?.account.providerID, let user = tvProvider?.account.user else {
                return exchangeFailed(exchange, reason: "the TV Provider account is signed out")
            }
            // VideoSubscriberAccount's second request (`verificationToken` = Adobe's request): the account's identity
            // provider answers with `samlAttributeQueryResponse`, which goes to `profiles/sso/Apple` as is.
            guard let identityProvider = tvProvider?.identityProvider else {
                return exchangeFailed(exchange, reason: "the TV Provider has no identity provider to answer the SAML request")
            }
            guard
                let saml = identityProvider.response(toRequest: request, provider: provider, user: user, nowMillis: clock.epochMillisecondsNow)
            else {
                return exchangeFailed(exchange, reason: "the identity provider could not read the SAML request")
            }
            return enqueue(.partnerProfile(samlResponse: saml, mvpd: mvpd, login: id))
        case .success(.alreadyAuthenticated(let held)) where !exchange.completesSetRequestor:
            login = .requestingCode(CodeRequest(id: id, mvpd: held))
            return enqueue(.fetchProfile(mvpd: held, login: id))
        case .success(.session(let code)) where !exchange.completesSetRequestor:
            // A fallback (pfs, configuration, missing parameters): the backend answered with a code.
            snapshot.code = code
            return startPolling(code, login: id, announce: true)
        case .success:
            return exchangeFailed(exchange, reason: "the backend did not offer the partner flow")
        case .failure(let failure):
            return exchangeFailed(exchange, reason: FailureMapping.describe(failure))
        }
    }

    mutating func partnerProfileFinished(_ result: Result<BackendResponse, BackendFailure>, login id: UInt64, stage: Stage) -> [Action] {
        guard let exchange = exchange(id) else { return [] }
        guard case .success(.profile(var profile?)) = result, profile.expiresEpochMs > clock.epochMillisecondsNow else {
            if case .failure(let failure) = result { return exchangeFailed(exchange, reason: FailureMapping.describe(failure)) }
            return exchangeFailed(exchange, reason: "no appleSSO profile was created")
        }
        profile.source = .apple
        guard exchange.completesSetRequestor else { return adopt(profile, cached: false) }
        // The silent exchange says nothing but `setRequestorComplete` (DOC `[ASSO]` step 2).
        login = .idle
        snapshot.profile = profile
        snapshot.selectedMVPD = profile.mvpd
        return completeSetRequestor(pending: queuedAtSetRequestor)
    }

    /// An exchange that did not produce a profile: `setRequestor` still completes (its configuration is
    /// there); a login reports `APPL_ERROR` with the reason and ends unauthenticated.
    private mutating func exchangeFailed(_ exchange: PartnerExchange, reason: String) -> [Action] {
        login = .idle
        if exchange.completesSetRequestor {
            return completeSetRequestor(pending: queuedAtSetRequestor)
        }
        return [
            .emit(.status(StatusReport(id: .appleSSOAuthenticationError, level: .error, message: nil, extra: ["details": .string(reason)]))),
            .emit(.setAuthenticationStatus(AccessEnabler.statusError, .genericAuthentication)),
        ] + failPendingAuthorizations()
    }

    private var queuedAtSetRequestor: [DeviceCommand] {
        if case .configuring(let pending) = setup { return pending }
        return []
    }
}
