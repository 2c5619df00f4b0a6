import AccessEnablerAPI

/// AccessEnabler calls as they arrive, and `setRequestor`: the MVPD list the device needs before
/// anything else (calls made earlier wait for it, as AccessEnabler queues them).
extension DeviceEngine {
    mutating func apply(_ command: DeviceCommand) -> [Action] {
        switch command {
        case .setRequestor(let keys):
            if let keys { runtimeSigningKeys = keys }
            setup = .configuring(pending: queuedCommands)
            return enqueue(openingOperation())
        case .setOptions(let options):
            for (key, value) in options { snapshot.options[key] = value }
            return []
        case .getSelectedProvider:
            let mvpd = snapshot.selectedMVPD.map { id in
                snapshot.mvpds?.first(where: { $0.id == id }) ?? MVPD(id: id, displayName: id)
            }
            return [.emit(.selectedProvider(mvpd))]
        default:
            break
        }
        switch setup {
        case .awaitingRequestor(let pending, let failed):
            setup = .awaitingRequestor(pending: pending + [command], failed: failed)
            return []
        case .configuring(let pending):
            setup = .configuring(pending: pending + [command])
            return []
        case .configured:
            break
        }
        switch command {
        case .checkAuthentication:
            return tvProviderStatusesAtCheckAuthentication() + authenticationStatusEvents(cached: true)
        case .getAuthentication(let mvpd):
            return getAuthentication(mvpd: mvpd)
        case .setSelectedProvider(let mvpd):
            return setSelectedProvider(mvpd)
        case .checkAuthorization(let resource):
            return checkAuthorization(resource)
        case .getAuthorization(let resource):
            return getAuthorization(resource)
        case .checkPreauthorizedResources(let resources):
            return checkPreauthorizedResources(resources)
        case .getMetadata(let key):
            return getMetadata(key)
        case .logout:
            return logout()
        case .selectTVProvider(let choice):
            return selectTVProvider(choice)
        case .setRequestor, .setOptions, .getSelectedProvider:
            return []
        }
    }

    /// AccessEnabler calls and backend operations accepted but not yet sent: calls waiting for
    /// `setRequestor`, and operations queued behind the one request in flight. A caller that
    /// keeps sending faster than the backend answers is refused past a bound on this (see
    /// `Fleet`'s per-device bound) rather than growing it without limit.
    package var pendingWork: Int { queuedCommands.count + pipeline.queue.count }

    /// Calls waiting for `setRequestor`.
    var queuedCommands: [DeviceCommand] {
        switch setup {
        case .awaitingRequestor(let pending, _), .configuring(let pending): pending
        case .configured: []
        }
    }

    /// `setRequestorComplete(1)`, then the calls that waited for it.
    mutating func completeSetRequestor(pending: [DeviceCommand]) -> [Action] {
        setup = .configured
        var actions: [Action] = [.emit(.setRequestorComplete(AccessEnabler.statusSuccess))]
        for command in pending { actions += apply(command) }
        return actions
    }

    mutating func configurationFinished(_ result: Result<BackendResponse, BackendFailure>, stage: Stage) -> [Action] {
        let pending = queuedCommands
        if case .success(.configuration(let mvpds)) = result {
            snapshot.mvpds = mvpds
            var actions: [Action] = []
            switch tvProviderAtSetRequestor() {
            case .status(let report): actions.append(.emit(.status(report)))
            case .exchange(let mvpd):
                // `setRequestor` completes once the exchange ended; calls keep queueing behind it.
                return startExchange(mvpd: mvpd, completesSetRequestor: true)
            case .nothing: break
            }
            return actions + completeSetRequestor(pending: pending)
        }
        let failure: BackendFailure
        if case .failure(let error) = result {
            failure = error
        } else {
            failure = .malformed(status: 200, reason: "unexpected answer to configuration request")
        }
        let id = isSignatureRefusal(failure) && stage == .call ? .signatureRefused : FailureMapping.setRequestorStatus(for: failure, stage: stage)
        // Calls that waited for this `setRequestor` are dropped with it.
        setup = snapshot.mvpds == nil ? .awaitingRequestor(pending: [], failed: true) : .configured
        return [
            .emit(.status(id, message: FailureMapping.describe(failure))),
            .emit(.setRequestorComplete(AccessEnabler.statusError)),
        ]
    }
}
