import AccessEnablerAPI
import RegcodeRecords
import RegcodeSupport

/// The poll loop of a pending code: when to poll (the polling contract of ``PollPolicy``), what
/// each answer means for the loop (``PollOutcome``), the poll log, and how a code ends (expiry,
/// refusal, giving up).
extension DeviceEngine {
    mutating func startPolling(
        _ code: IssuedCode,
        login id: UInt64,
        announce: Bool,
        firstDelay: Duration? = nil,
        recoveries: Int = 0
    ) -> [Action] {
        let expiry = clock.instant(forEpochMilliseconds: code.expiresEpochMs)
        var actions: [Action] = []
        if announce {
            if settings.sso?.platform.family == .ios {
                // The iOS AccessEnabler never shows a code: `setSelectedProvider` leads to `navigateToUrl:` with the
                // MVPD login page ([CB] §C, access-enabler-api.md `setSelectedProvider`); the page completes the
                // login and the device fetches the profile as the SDK does after `handleExternalURL:`.
                actions.append(.emit(.navigateToUrl(loginURL(for: code))))
            } else {
                actions.append(.emit(.status(.registrationCode, level: .success, message: code.code, extra: ["expires": .int(code.expiresEpochMs)])))
            }
        }
        var loop = PollLoop(id: id, code: code, expiry: expiry, recoveries: recoveries)
        guard clock.now < expiry else {
            login = .polling(loop)
            return actions + codeExpiryFired()
        }
        actions.append(.schedule(.codeExpiry, at: expiry))
        let delay = firstDelay ?? settings.polling.firstPollDelay
        if delay <= .zero {
            loop.outstanding = true
            login = .polling(loop)
            actions += enqueue(.poll(code: code.code, login: id, planned: clock.now))
        } else {
            actions += schedulePoll(at: clock.now.advanced(by: delay), loop: &loop)
            login = .polling(loop)
        }
        return actions
    }

    /// Arms the poll timer, unless `instant` is past expiry: then the expiry timer takes over.
    func schedulePoll(at instant: DeviceInstant, loop: inout PollLoop) -> [Action] {
        guard instant < loop.expiry else {
            loop.nextPoll = nil
            return []
        }
        loop.nextPoll = instant
        return [.schedule(.poll, at: instant)]
    }

    mutating func pollTimerFired() -> [Action] {
        guard case .polling(var loop) = login, let planned = loop.nextPoll, clock.now >= planned else { return [] }
        loop.nextPoll = nil
        guard !loop.outstanding, clock.now < loop.expiry else {
            login = .polling(loop)
            return []
        }
        loop.outstanding = true
        login = .polling(loop)
        return enqueue(.poll(code: loop.code.code, login: loop.id, planned: planned))
    }

    mutating func pollFinished(
        _ operation: Operation,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming?,
        stage: Stage
    ) -> [Action] {
        guard case .poll(let code, let id, _) = operation else { return [] }
        let outcome = FailureMapping.pollOutcome(of: result, profile: settings.profile)
        guard case .polling(var loop) = login, loop.id == id, loop.code.code == code, clock.now < loop.expiry else {
            // The loop ended while this poll was out; its answer is logged but not acted on.
            if let timing { return recordPoll(operation, result: result, timing: timing, outcome: .abandoned, nextDelay: nil) }
            return []
        }
        loop.outstanding = false
        login = .polling(loop)
        // The poll log's entry for an answer that ends polling of this code (no next poll).
        func finalRecord() -> [Action] {
            timing.map { recordPoll(operation, result: result, timing: $0, outcome: outcome, nextDelay: nil) } ?? []
        }

        if case .success(.profile(let profile?)) = result {
            return finalRecord() + adopt(profile, cached: false)
        }

        if case .failure(let failure) = result, isSignatureRefusal(failure) {
            // Polling on cannot fix a refused signature: stop and say why.
            return finalRecord() + giveUp(reason: FailureMapping.describe(failure), status: signatureRefusedStatus(failure))
        }

        // Adobe asks for a new authentication: for a pending login that is a new code (bounded as below).
        var asksForAuthentication = false
        if case .failure(.http(_, _, let error?)) = result, error.action == .authentication { asksForAuthentication = true }
        if outcome == .codeInvalid || asksForAuthentication {
            return finalRecord() + codeNoLongerValid(code, loop: loop)
        }

        if case .failure(let failure) = result, ![.pending, .throttled].contains(outcome), !isRetried(failure) {
            return finalRecord() + giveUpPolling(after: failure)
        }
        return continuePolling(operation, result: result, timing: timing, outcome: outcome, loop: loop)
    }

    /// The backend no longer knows the code: a new one if the policy allows (the backend forgot the session:
    /// restarted, purged; announced with a new REGCODE), else the login ends.
    private mutating func codeNoLongerValid(_ code: String, loop: PollLoop) -> [Action] {
        let reason = "registration code \(code) is no longer valid"
        guard loop.recoveries < settings.polling.codeRecoveries else {
            return codeEnded(reason: reason, outcome: .failed(reason: reason))
        }
        var actions: [Action] = [.cancel(.poll), .cancel(.codeExpiry)]
        actions += endCode(.failed(reason: reason))
        return actions
            + requestCode(mvpd: loop.code.mvpd ?? snapshot.selectedMVPD ?? settings.presetMVPD ?? "", recoveries: loop.recoveries + 1)
    }

    /// Whether polling on may fix `failure` (the network, throttling, server errors, an enhanced error asking
    /// for a retry).
    private func isRetried(_ failure: BackendFailure) -> Bool {
        switch FailureMapping.remedy(for: failure) {
        case .retry: true
        case .giveUp, .refetchConfiguration, .refreshToken, .registerAgain: false
        }
    }

    /// What polling on cannot fix (an enhanced error whose action is not a retry, a 4xx without one such as an
    /// edge's HTML 403, a 401 after the token was refreshed and the client registered again): stop now with
    /// REG500, Adobe's code in `details` when it gave one.
    private mutating func giveUpPolling(after failure: BackendFailure) -> [Action] {
        let reason = FailureMapping.describe(failure)
        var extra: [String: JSONValue] = [:]
        if case .http(_, _, let error?) = failure { extra["details"] = .string(error.code) }
        let status = Action.emit(.status(.registrationCodeFailed, message: reason, extra: extra))
        return giveUp(reason: reason, status: status)
    }

    /// Schedules the next poll after an answer that keeps the code alive: the interval after `pending`, the
    /// throttled wait after a 429, a backoff after an error (giving up after too many in a row).
    private mutating func continuePolling(
        _ operation: Operation,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming?,
        outcome: PollOutcome,
        loop: PollLoop
    ) -> [Action] {
        guard case .poll(_, _, let planned) = operation else { return [] }
        var loop = loop
        let policy = settings.polling
        let next: DeviceInstant
        switch outcome {
        case .pending:
            loop.consecutiveErrors = 0
            next = max(planned.advanced(by: policy.nextPollDelay(using: &rng)), clock.now)
        case .throttled:
            var retryAfter: Duration?
            if case .failure(.http(_, let value, _)) = result { retryAfter = value }
            next = clock.now.advanced(by: policy.throttledDelay(retryAfter: retryAfter, using: &rng))
        default:
            loop.consecutiveErrors += 1
            if let limit = policy.maxConsecutiveErrors, loop.consecutiveErrors >= limit {
                var actions: [Action] = []
                if let timing { actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: nil) }
                login = .polling(loop)
                return actions + giveUp(reason: "\(loop.consecutiveErrors) consecutive polling errors")
            }
            var delay = policy.backoffDelay(consecutiveErrors: loop.consecutiveErrors, using: &rng)
            if case .failure(.http(_, let retryAfter?, let error?)) = result, error.action == .retryAfter, policy.honoursThrottle {
                delay = max(delay, retryAfter)
            }
            next = clock.now.advanced(by: delay)
        }
        let willPoll = next < loop.expiry
        var actions: [Action] = []
        if let timing {
            actions += recordPoll(
                operation,
                result: result,
                timing: timing,
                outcome: outcome,
                nextDelay: willPoll ? clock.now.duration(to: next) : nil
            )
        }
        actions += schedulePoll(at: next, loop: &loop)
        login = .polling(loop)
        return actions
    }

    func recordPoll(
        _ operation: Operation,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming,
        outcome: PollOutcome,
        nextDelay: Duration?
    ) -> [Action] {
        guard case .poll(let code, _, let planned) = operation else { return [] }
        let status: Int?
        switch result {
        case .success: status = 200
        case .failure(let failure): status = failure.httpStatus
        }
        let attempt = PollAttempt(
            code: code,
            plannedEpochMs: clock.epochMilliseconds(at: planned),
            sentEpochMs: clock.epochMilliseconds(at: timing.sentAt),
            latencyMs: timing.latencyMilliseconds,
            httpStatus: status,
            outcome: outcome,
            nextDelayMs: nextDelay?.milliseconds
        )
        return [.recordPoll(attempt)]
    }

    mutating func codeExpiryFired() -> [Action] {
        guard case .polling(let loop) = login, clock.now >= loop.expiry else { return [] }
        return codeEnded(reason: "registration code \(loop.code.code) expired", outcome: .expired)
    }

    /// The code can no longer be completed: renew it if the policy allows, else report and stop.
    mutating func codeEnded(reason: String, outcome: CodeOutcome) -> [Action] {
        guard case .polling(let loop) = login else { return [] }
        var actions: [Action] = [.cancel(.poll), .cancel(.codeExpiry)]
        actions += endCode(outcome)
        if case .renew(let times) = settings.polling.onExpiry, snapshot.renewals < times {
            snapshot.renewals += 1
            actions += requestCode(mvpd: loop.code.mvpd ?? snapshot.selectedMVPD ?? settings.presetMVPD ?? "")
            return actions
        }
        login = .idle
        actions.append(.emit(.app(.sessionEnded(reason: .expired, error: nil))))
        actions.append(
            .emit(
                .status(
                    .registrationCodeExpired,
                    message: reason,
                    extra: ["code": .string(loop.code.code), "expires": .int(loop.code.expiresEpochMs)]
                )
            )
        )
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .genericAuthentication)))
        actions += failPendingAuthorizations()
        return actions
    }

    /// Stops polling for good: `status` (REG500 unless given), then `setAuthenticationStatus(0, …)`.
    mutating func giveUp(reason: String, status: Action? = nil) -> [Action] {
        guard case .polling = login else { return [] }
        login = .idle
        var actions: [Action] = [.cancel(.poll), .cancel(.codeExpiry)]
        actions += endCode(.failed(reason: reason))
        actions.append(status ?? .emit(.status(.registrationCodeFailed, message: reason)))
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, .genericAuthentication)))
        return actions + failPendingAuthorizations()
    }

    /// The MVPD of the code being polled, so the client can prefer its profile.
    func pollingMVPD(code: String) -> String? {
        if case .polling(let loop) = login, loop.code.code == code { return loop.code.mvpd ?? snapshot.selectedMVPD }
        return snapshot.selectedMVPD
    }
}

extension DeviceEngine {
    /// The MVPD login URL of `code`, relative to the backend: v2's `authenticate` URL as `sessions` answers it, v1's
    /// `GET /api/v1/authenticate` with the code (REST v1 "initiate authentication").
    func loginURL(for code: IssuedCode) -> String {
        switch settings.profile {
        case .v2:
            return "/api/v2/authenticate/\(FormEncoding.pathSegment(settings.requestor))/\(FormEncoding.pathSegment(code.code))"
        case .v1:
            var query: [(String, String)] = [("reg_code", code.code), ("requestor_id", settings.requestor)]
            if let mvpd = code.mvpd { query.append(("mso_id", mvpd)) }
            query.append(("domain_name", settings.identity.domainName))
            query.append(("redirect_url", settings.identity.redirectURL))
            return "/api/v1/authenticate?" + FormEncoding.encode(query)
        }
    }
}
