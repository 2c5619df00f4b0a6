/// What the persona's rules change in the flows: the launch check, the MVPD list loaded only for the picker, and
/// which vocabulary reaches the lab. Each step reads a ``PersonaRules`` field; the flows themselves are shared.
extension DeviceEngine {
    /// `setRequestor`: the MVPD list (the SDK) or the launch check (a native app, REST v2 cookbook step 2).
    func openingOperation() -> Operation {
        rules.launchCheck ? .launchCheck(mvpd: snapshot.selectedMVPD) : .configure
    }

    /// The launch check answered: adopt the profile the backend holds (the one valid longest when there are
    /// several: the checklist's recommended practice), or none; then the calls that waited.
    mutating func launchChecked(_ result: Result<BackendResponse, BackendFailure>) -> [Action] {
        let pending = queuedCommands
        guard case .success(.profiles(let profiles)) = result else {
            setup = snapshot.mvpds == nil ? .awaitingRequestor(pending: [], failed: true) : .configured
            return [.emit(.app(.callFailed(call: "profiles", error: result.enhancedError, message: result.failureDescription)))]
        }
        let now = clock.epochMillisecondsNow
        let valid = profiles.filter { $0.expiresEpochMs > now }
        let chosen = valid.max { ($0.expiresEpochMs, $1.mvpd) < ($1.expiresEpochMs, $0.mvpd) }
        let reason: AppEvent.ProfileChoice = chosen == nil ? .none : (valid.count == 1 ? .only : .longestValidity)
        // The MVPD list is loaded when the picker needs it; an empty list marks the app as opened.
        if snapshot.mvpds == nil { snapshot.mvpds = [] }
        snapshot.profile = chosen
        if let chosen { snapshot.selectedMVPD = chosen.mvpd }
        setup = .configured
        var actions: [Action] = [.emit(.app(.profilesChecked(profiles: profiles, chosen: chosen?.mvpd, reason: reason)))]
        if let chosen { actions.append(.emit(.app(.signedIn(chosen)))) }
        for command in pending { actions += apply(command) }
        return actions
    }

    /// The provider picker: at once when the MVPD list is fresh, else after loading it (only a persona that
    /// caches the list loads it here; the SDK loaded it at `setRequestor`).
    mutating func showProviderPicker() -> [Action] {
        login = .awaitingProvider
        guard let cache = rules.configurationCache else {
            return [.emit(.displayProviderDialog(snapshot.mvpds ?? []))]
        }
        if let loadedAt = configurationLoadedAt, clock.now < loadedAt.advanced(by: cache) {
            let age = clock.epochMilliseconds(at: clock.now) - clock.epochMilliseconds(at: loadedAt)
            return [
                .emit(.app(.configurationLoaded(mvpds: snapshot.mvpds?.count ?? 0, fromCache: true, ageMs: age))),
                .emit(.app(.providerPicker(snapshot.mvpds ?? []))),
            ]
        }
        return enqueue(.pickerConfiguration)
    }

    /// The MVPD list the picker asked for.
    mutating func pickerConfigurationLoaded(_ result: Result<BackendResponse, BackendFailure>) -> [Action] {
        guard case .awaitingProvider = login else { return [] }
        guard case .success(.configuration(let mvpds)) = result else {
            login = .idle
            return [.emit(.app(.callFailed(call: "configuration", error: result.enhancedError, message: result.failureDescription)))]
                + failPendingAuthorizations()
        }
        snapshot.mvpds = mvpds
        configurationLoadedAt = clock.now
        return [
            .emit(.app(.configurationLoaded(mvpds: mvpds.count, fromCache: false, ageMs: 0))),
            .emit(.app(.providerPicker(mvpds))),
        ]
    }

    /// Keeps only the events of the persona's vocabulary: a native app has no callbacks, an SDK app no app
    /// states. Diagnostics (`sso.…`, `queue.…`) reach the lab either way.
    func keepingVocabulary(_ actions: [Action]) -> [Action] {
        let keepsCallbacks = rules.vocabulary == .accessEnablerCallbacks
        guard actions.contains(where: { if case .emit = $0 { true } else { false } }) else { return actions }
        return actions.filter { action in
            guard case .emit(let event) = action else { return true }
            if case .app = event { return !keepsCallbacks }
            return event.callback == nil || keepsCallbacks
        }
    }
}

extension Result where Success == BackendResponse, Failure == BackendFailure {
    /// The enhanced error of a failed call, when the backend sent one.
    var enhancedError: EnhancedError? {
        if case .failure(.http(_, _, let error)) = self { return error }
        return nil
    }

    /// A failed call in words; an unexpected answer says so.
    var failureDescription: String {
        switch self {
        case .failure(let failure): FailureMapping.describe(failure)
        case .success: "unexpected answer"
        }
    }
}
