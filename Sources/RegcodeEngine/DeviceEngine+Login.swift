import AccessEnablerAPI

/// The login up to a code: `getAuthentication`, the provider picker, the code request with its
/// bounded retries, and adopting a profile the backend already holds.
extension DeviceEngine {
    mutating func getAuthentication(mvpd: String?) -> [Action] {
        if isAuthenticated {
            return authenticationStatusEvents(cached: true)
        }
        if mvpd == nil, let apple = tvProviderAtGetAuthentication() {
            return apple
        }
        var actions = stopLogin(endingCodeAs: .replaced)
        snapshot.renewals = 0
        // A device set to pick TempPass shows the picker even with a configured MVPD: the picker is where it is.
        if let preset = mvpd ?? (settings.loginProvider == .regular ? settings.presetMVPD : nil) {
            actions += selectProvider(preset)
        } else if rules.codeFirstLogin && settings.loginProvider == .codeFirst {
            // REST v2 cookbook step 4: `POST sessions` without an MVPD answers `resume`; the second screen picks.
            actions += requestCode(mvpd: nil)
        } else {
            actions += showProviderPicker()
        }
        return actions
    }

    mutating func setSelectedProvider(_ mvpd: String?) -> [Action] {
        guard let mvpd else {
            var actions = stopLogin(endingCodeAs: .cancelled)
            actions.append(.emit(.status(.providerSelectionCancelled, level: .info, message: "authentication cancelled")))
            actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .providerNotSelected)))
            actions += failPendingAuthorizations()
            return actions
        }
        var actions = stopLogin(endingCodeAs: .replaced)
        snapshot.renewals = 0
        actions += selectProvider(mvpd)
        return actions
    }

    mutating func selectProvider(_ mvpd: String) -> [Action] {
        snapshot.selectedMVPD = mvpd
        var actions: [Action] = [.emit(.sendTrackingData(.mvpdSelection, [mvpd] + Tracking.deviceFields(settings)))]
        actions += requestCode(mvpd: mvpd)
        return actions
    }

    /// - Parameter recoveries: new codes this login already asked for because the backend forgot one.
    mutating func requestCode(mvpd: String?, recoveries: Int = 0) -> [Action] {
        let id = nextLoginID()
        login = .requestingCode(CodeRequest(id: id, mvpd: mvpd, recoveries: recoveries))
        // v1 cookbook step 2: a device the backend already knows is authenticated gets no new code.
        // (v2 needs no such call: `POST sessions` itself answers `authorize`.) A device that hosts apps
        // emulates the AccessEnabler, whose local storage alone decides single sign-on (sso.md §3.0): the
        // backend's token for the device id is not asked for, or apps that share an id but no storage
        // would sign each other in, which the tech note's table ("SSO on iOS when using the Access
        // Enabler": separate storage → authenticate once per app), DOC `[OV]` (tvOS NSUserDefaults
        // "cannot be shared among different applications") and DOC `[UP370]` ("Regular (Adobe) SSO will
        // not work between … 3.7.0 and … lower than 3.7.0, even for … the same vendor") rule out.
        if settings.profile == .v1 && settings.sso == nil, let mvpd {
            return enqueue(.checkAuthentication(mvpd: mvpd, login: id))
        }
        return enqueue(.createSession(mvpd: mvpd, login: id))
    }

    /// Ends the current login silently (a new code or a cancel replaces it); a pending code ends
    /// with `outcome`.
    mutating func stopLogin(endingCodeAs outcome: CodeOutcome) -> [Action] {
        let wasActive: Bool
        if case .idle = login { wasActive = false } else { wasActive = true }
        login = .idle
        var actions = endCode(outcome)
        guard wasActive else { return actions }
        // A retry the request slot waits for is left armed: its flow is checked when it fires.
        actions += [.cancel(.poll), .cancel(.codeExpiry)]
        return actions
    }

    /// Drops the pending code from the snapshot and says why it ended.
    mutating func endCode(_ outcome: CodeOutcome) -> [Action] {
        guard let code = snapshot.code else { return [] }
        snapshot.code = nil
        return [.endCode(CodeEnding(code: code.code, outcome: outcome))]
    }

    func authenticationStatusEvents(cached: Bool) -> [Action] {
        if isAuthenticated, let profile = snapshot.profile {
            return [
                .emit(.app(.signedIn(profile))),
                .emit(.setAuthenticationStatus(AccessEnabler.statusSuccess, .none)),
                .emit(.sendTrackingData(.authenticationDetection, Tracking.authentication(profile, cached: cached, settings: settings))),
            ]
        }
        return [
            .emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated)),
            .emit(.sendTrackingData(.authenticationDetection, Tracking.notAuthenticated(settings))),
        ]
    }

    mutating func sessionFinished(
        _ result: Result<BackendResponse, BackendFailure>,
        mvpd: String?,
        login id: UInt64,
        stage: Stage
    ) -> [Action] {
        guard case .requestingCode(let request) = login, request.id == id else { return [] }
        switch result {
        case .success(.session(let code)):
            snapshot.code = code
            let created: Action = .emit(.app(.sessionCreated(mvpd: code.mvpd ?? mvpd, code: code.code, notAfterMs: code.expiresEpochMs)))
            return [created] + startPolling(code, login: id, announce: true, recoveries: request.recoveries)
        case .success(.alreadyAuthenticated(let mvpd)):
            return [.emit(.app(.sessionCreated(mvpd: mvpd, code: nil, notAfterMs: nil)))] + enqueue(.fetchProfile(mvpd: mvpd, login: id))
        default:
            let failure: BackendFailure
            if case .failure(let error) = result {
                failure = error
            } else {
                failure = .malformed(status: 200, reason: "unexpected answer to session request")
            }
            // Transient failures were already retried by the request pipeline, up to the bound.
            return codeRequestFailed(failure, stage: stage)
        }
    }

    /// No code could be obtained: `status` REG500 (after R400/R401/SEC403 when those explain it), then
    /// `setAuthenticationStatus(0, "Generic Authentication Error")`.
    ///
    /// A TempPass that is already spent (`temporary_access_*` on `sessions` or the profile) is no code failure:
    /// `status N111` → `setAuthenticationStatus(0, "User Not Authenticated Error")`.
    mutating func codeRequestFailed(_ failure: BackendFailure, stage: Stage) -> [Action] {
        login = .idle
        if stage == .call, EntitlementVariants.isTempPassSpent(failure), case .http(_, _, let error) = failure {
            return [
                .emit(EntitlementVariants.tempPassExpired(error, mvpd: snapshot.selectedMVPD ?? "")),
                .emit(.setAuthenticationStatus(AccessEnabler.statusError, .userNotAuthenticated)),
            ] + failPendingAuthorizations()
        }
        var actions: [Action] = [.emit(.app(.sessionEnded(reason: .failed, error: Result.failure(failure).enhancedError)))]
        // A refused registration or token explains the REG500; a transient failure whose retries ran out does not.
        if let refusal = FailureMapping.refusal(failure, at: stage) {
            actions.append(.emit(.status(refusal, message: FailureMapping.describe(failure))))
        } else if stage == .call, isSignatureRefusal(failure) {
            actions.append(signatureRefusedStatus(failure))
        }
        actions.append(.emit(.status(.registrationCodeFailed, message: "error fetching registration code: \(FailureMapping.describe(failure))")))
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .genericAuthentication)))
        actions += failPendingAuthorizations()
        return actions
    }

    /// v1 `checkauthn`: 200 → adopt the backend's AuthN token; anything else → ask for a code (whose own
    /// failure, if any, is what gets reported).
    mutating func authenticationChecked(_ result: Result<BackendResponse, BackendFailure>, mvpd: String, login id: UInt64) -> [Action] {
        guard case .requestingCode(let request) = login, request.id == id else { return [] }
        if case .success(.authenticationStatus(true)) = result {
            return enqueue(.fetchProfile(mvpd: mvpd, login: id))
        }
        return enqueue(.createSession(mvpd: mvpd, login: id))
    }

    /// The profile the backend said it holds: adopt it, or (v1) fall back to a new code. On v2 the sessions
    /// endpoint already said `authorize`, so a missing profile there is a backend fault, reported as REG500.
    mutating func profileFetched(
        _ result: Result<BackendResponse, BackendFailure>,
        mvpd: String,
        login id: UInt64,
        stage: Stage
    ) -> [Action] {
        guard case .requestingCode(let request) = login, request.id == id else { return [] }
        if case .success(.profile(let profile?)) = result, profile.expiresEpochMs > clock.epochMillisecondsNow {
            return adopt(profile, cached: false)
        }
        if settings.profile == .v1 {
            return enqueue(.createSession(mvpd: mvpd, login: id))
        }
        let failure: BackendFailure
        switch result {
        case .failure(let error): failure = error
        default: failure = .malformed(status: 200, reason: "sessions answered authorize but no profile for \(mvpd) was returned")
        }
        return codeRequestFailed(failure, stage: stage)
    }

    /// The device is authenticated (second-screen login done, or a profile the backend already held):
    /// `setAuthenticationStatus(1, "")`, `sendTrackingData(authenticationDetection)`, `status N010` (warning) for
    /// a `degraded` profile or `N011` (info) for a `temporary` (TempPass) one, then the authorizations
    /// `getAuthorization` left waiting.
    mutating func adopt(_ profile: AuthProfile, cached: Bool) -> [Action] {
        login = .idle
        var actions = endCode(.authenticated)
        snapshot.profile = profile
        snapshot.selectedMVPD = profile.mvpd
        actions += [.cancel(.poll), .cancel(.codeExpiry)]
        actions.append(.emit(.app(.signedIn(profile))))
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusSuccess, .none)))
        actions.append(.emit(.sendTrackingData(.authenticationDetection, Tracking.authentication(profile, cached: cached, settings: settings))))
        if let variant = EntitlementVariants.authenticationStatus(for: profile) {
            actions.append(.emit(variant))
        }
        let waiting = pendingAuthorizations
        pendingAuthorizations = []
        for resource in waiting {
            actions += enqueue(.authorize(resource: resource, mvpd: profile.mvpd))
        }
        return actions
    }
}
