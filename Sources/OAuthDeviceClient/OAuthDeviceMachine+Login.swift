import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// The login: discovery, the device authorization request (RFC 8628 §3.1), the poll loop (§3.4) and what each poll's
/// answer means for it (§3.5).
extension OAuthDeviceMachine {
    // MARK: Commands

    mutating func login() -> [Action] {
        switch state {
        case .idle, .denied, .expired, .failed: break
        case .discovering, .authorizing, .polling, .authorized, .refreshing, .revoking: return []
        }
        let problems = settings.validationErrors()
        guard problems.isEmpty else {
            return fail(OAuthFailure(stage: .configuration, reason: .configuration(problems.joined(separator: "; "))))
        }
        if settings.discovery != .off && discovered == nil {
            state = .discovering(Attempt(number: 1, step: .due))
        } else {
            state = .authorizing(Attempt(number: 1, step: .due))
        }
        return []
    }

    /// Ends a running login; an answer still out is dropped when it comes.
    mutating func cancelLogin() -> [Action] {
        switch state {
        case .discovering, .authorizing, .polling:
            state = .idle
            return cancelTimers([.poll, .codeExpiry, .retry]) + [.emit(.cancelled)]
        case .idle, .authorized, .refreshing, .revoking, .denied, .expired, .failed:
            return []
        }
    }

    // MARK: Discovery

    mutating func discoveryAnswered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        guard case .discovering(let attempt) = state, attempt.step == .sent(request.id) else { return [] }
        if case .success(let response) = result, response.status == 200 {
            guard let metadata = Self.decode(OAuthServerMetadata.self, from: response.body) else {
                return fail(OAuthFailure(stage: .discovery, reason: .malformed("not an authorization server metadata document")))
            }
            var endpoints: [OAuthEndpoint: String] = [:]
            endpoints[.deviceAuthorization] = metadata.deviceAuthorizationEndpoint
            endpoints[.token] = metadata.tokenEndpoint
            endpoints[.revocation] = metadata.revocationEndpoint
            endpoints[.userinfo] = metadata.userinfoEndpoint
            endpoints[.introspection] = metadata.introspectionEndpoint
            discovered = endpoints
            state = .authorizing(Attempt(number: 1, step: .due))
            return [.cancel(.retry), .emit(.discovered(issuer: metadata.issuer))]
        }
        return retryOrFail(.discovery, attempt: attempt, result) { machine, attempt in machine.state = .discovering(attempt) }
    }

    /// Another try of a stage after a transport failure, 5xx or 429, while the retries last; else the stage fails.
    mutating func retryOrFail(
        _ stage: OAuthStage,
        attempt: Attempt,
        _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>,
        store: (inout Self, Attempt) -> Void
    ) -> [Action] {
        guard Self.isRetryable(result) else {
            if case .success(let response) = result {
                if let error = Self.decode(OAuthErrorResponse.self, from: response.body) {
                    return fail(OAuthFailure(stage: stage, reason: .tokenError(error.error, description: error.errorDescription)))
                }
                return fail(OAuthFailure(stage: stage, reason: .httpStatus(response.status)))
            }
            return fail(OAuthFailure(stage: stage, reason: .malformed(Self.describe(result))))
        }
        guard let delay = stageRetryDelay(after: attempt.number, result) else {
            return fail(OAuthFailure(stage: stage, reason: .retriesExhausted(attempts: attempt.number, last: Self.describe(result))))
        }
        let until = clock.now.advanced(by: delay)
        store(&self, Attempt(number: attempt.number + 1, step: .waiting(until: until)))
        return [.schedule(.retry, at: until)]
    }

    // MARK: Device authorization

    mutating func deviceAuthorizationAnswered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        guard case .authorizing(let attempt) = state, attempt.step == .sent(request.id) else { return [] }
        guard case .success(let response) = result, response.status == 200 else {
            return retryOrFail(.deviceAuthorization, attempt: attempt, result) { machine, attempt in machine.state = .authorizing(attempt) }
        }
        guard let answer = Self.decode(OAuthDeviceAuthorizationResponse.self, from: response.body), answer.expiresIn > 0 else {
            return fail(OAuthFailure(stage: .deviceAuthorization, reason: .malformed("not a device authorization response")))
        }
        let interval = answer.interval.map { Duration.seconds(max(0, $0)) } ?? settings.rules.defaultInterval
        let expiry = clock.now.advanced(by: .seconds(answer.expiresIn))
        let shown = OAuthUserCode(
            userCode: answer.userCode,
            verificationURI: answer.verificationURI,
            verificationURIComplete: answer.verificationURIComplete,
            expiresIn: .seconds(answer.expiresIn),
            expiresEpochMs: clock.epochMilliseconds(at: expiry),
            interval: interval,
            message: settings.rules.messageField == nil ? nil : answer.message
        )
        var polling = Polling(
            deviceCode: answer.deviceCode,
            shown: shown,
            expiry: expiry,
            expiresEpochMs: clock.epochMilliseconds(at: expiry),
            interval: interval,
            ownInterval: interval,
            step: .due
        )
        var actions: [Action] = [.cancel(.retry), .emit(.codeShown(shown)), .schedule(.codeExpiry, at: expiry)]
        // The user needs time to type the code: the first poll comes one interval after it is shown.
        actions += schedulePoll(after: pollDelay(polling.ownInterval), &polling)
        state = .polling(polling)
        return actions
    }

    // MARK: Polling

    /// The wait between polls: the device's interval, stretched (never shortened) by the jitter so a fleet spreads;
    /// halved for a `too-fast` device.
    mutating func pollDelay(_ interval: Duration) -> Duration {
        let base = settings.misbehaviour == .tooFast ? interval / 2 : interval
        let jitter = settings.retry.jitter
        guard jitter > 0 else { return base }
        return base * (1 + Double.random(in: 0...jitter, using: &rng))
    }

    /// Arms the poll timer `delay` from now, unless that is at or past expiry: then the expiry timer ends the code.
    func schedulePoll(after delay: Duration, _ polling: inout Polling) -> [Action] {
        let instant = clock.now.advanced(by: delay)
        guard instant < polling.expiry else {
            polling.step = .waiting(until: polling.expiry)
            return []
        }
        polling.step = .waiting(until: instant)
        return [.schedule(.poll, at: instant)]
    }

    mutating func pollTimerFired() -> [Action] {
        guard case .polling(var polling) = state, case .waiting(let until) = polling.step, clock.now >= until else { return [] }
        guard clock.now < polling.expiry else { return codeExpiryFired() }
        polling.step = .due
        state = .polling(polling)
        return []
    }

    mutating func codeExpiryFired() -> [Action] {
        guard case .polling(let polling) = state, clock.now >= polling.expiry else { return [] }
        state = .expired
        return cancelTimers([.poll, .codeExpiry, .retry]) + [.emit(.expired)]
    }

    mutating func resumePolling(_ code: OAuthDeviceSnapshot.PendingCode) -> [Action] {
        let expiry = clock.instant(forEpochMilliseconds: code.expiresEpochMs)
        guard clock.now < expiry else {
            state = .expired
            return [.emit(.expired)]
        }
        let interval = Duration.milliseconds(code.intervalMs)
        let ownInterval = Duration.milliseconds(code.ownIntervalMs)
        var polling = Polling(
            deviceCode: code.deviceCode,
            shown: OAuthUserCode(
                userCode: code.userCode,
                verificationURI: code.verificationURI,
                verificationURIComplete: code.verificationURIComplete,
                expiresIn: clock.now.duration(to: expiry),
                expiresEpochMs: code.expiresEpochMs,
                interval: interval,
                message: code.message
            ),
            expiry: expiry,
            expiresEpochMs: code.expiresEpochMs,
            interval: interval,
            ownInterval: ownInterval,
            step: .due
        )
        let actions: [Action] = [.schedule(.codeExpiry, at: expiry)] + schedulePoll(after: pollDelay(ownInterval), &polling)
        state = .polling(polling)
        return actions
    }

    mutating func pollAnswered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        let status = try? result.get().status
        guard case .polling(var polling) = state, polling.step == .sent(request.id) else {
            // The login ended while the poll was out: logged, not acted on.
            return [.recordPoll(record(request, status: status, outcome: .abandoned, interval: nil, previous: nil))]
        }
        let sentInterval = polling.interval
        let previous = polling.lastSentAt
        polling.lastSentAt = request.sentAt
        let answer = tokenAnswer(result)
        let outcome = pollOutcome(answer)
        var actions: [Action] = [
            .recordPoll(record(request, status: status, outcome: outcome, interval: sentInterval, previous: previous)),
            .emit(.poll(outcome)),
        ]

        switch answer {
        case .tokens(let tokens):
            actions += cancelTimers([.poll, .codeExpiry, .retry])
            return actions + authorize(tokens)
        case .error(let error, _):
            switch outcome {
            case .authorizationPending:
                polling.consecutiveErrors = 0
                actions += schedulePoll(after: pollDelay(polling.ownInterval), &polling)
            case .slowDown:
                polling.consecutiveErrors = 0
                actions += slowDown(error, &polling)
                actions += schedulePoll(after: pollDelay(polling.ownInterval), &polling)
            case .denied(let code):
                state = .denied(code)
                return actions + cancelTimers([.poll, .codeExpiry, .retry]) + [.emit(.denied(code))]
            case .expired:
                state = .expired
                return actions + cancelTimers([.poll, .codeExpiry, .retry]) + [.emit(.expired)]
            default:
                return actions + fail(OAuthFailure(stage: .poll, reason: .tokenError(error.error, description: error.errorDescription)))
            }
        case .retryable(let status, let retryAfter, let reason):
            polling.consecutiveErrors += 1
            if let limit = settings.retry.maxConsecutiveErrors, polling.consecutiveErrors >= limit {
                return actions + fail(OAuthFailure(stage: .poll, reason: .retriesExhausted(attempts: polling.consecutiveErrors, last: reason)))
            }
            actions += schedulePoll(after: errorDelay(polling, status: status, retryAfter: retryAfter), &polling)
        case .unexpected(let status, _):
            return actions + fail(OAuthFailure(stage: .poll, reason: .httpStatus(status)))
        }
        state = .polling(polling)
        return actions
    }

    /// The outcome of a poll, from the answer and the provider row (its refusal codes, Auth0's `invalid_grant` after
    /// expiry).
    private func pollOutcome(_ answer: TokenAnswer) -> OAuthPollOutcome {
        switch answer {
        case .tokens: return .authorized
        case .retryable(let status?, _, _): return .serverError(status: status)
        case .retryable(nil, _, let reason): return .transportFailure(reason)
        case .unexpected(let status, _): return .unexpected(status: status)
        case .error(let error, _):
            let rules = settings.rules
            switch error.error {
            case .authorizationPending: return .authorizationPending
            case .slowDown: return .slowDown
            case .expiredToken: return .expired(error.error)
            case .invalidGrant where rules.expiredCodeRepeatsAsInvalidGrant: return .expired(error.error)
            case let code where rules.denialErrors.contains(code): return .denied(code)
            default: return .error(error.error)
            }
        }
    }

    /// RFC 8628 §3.5: 5 s more for this and every later poll, or the interval the answer names where the provider
    /// names one (``OAuthProviderRules/slowDownNamesInterval``); a device that ignores `slow_down` keeps its interval.
    private mutating func slowDown(_ error: OAuthErrorResponse, _ polling: inout Polling) -> [Action] {
        var requested = polling.interval + .seconds(5)
        if settings.rules.slowDownNamesInterval, let named = error.interval {
            requested = max(.seconds(named), polling.interval)
        }
        polling.interval = requested
        if settings.misbehaviour != .ignoreSlowDown { polling.ownInterval = requested }
        return [.emit(.slowedDown(requested: requested, inForce: polling.ownInterval))]
    }

    /// The wait after a transport failure, 5xx or 429: PollPolicy's bounded back-off, whose base is the interval in
    /// force, so a failing server never sees a poll sooner than the interval; after a 429 never under `Retry-After`.
    private mutating func errorDelay(_ polling: Polling, status: Int?, retryAfter: Duration?) -> Duration {
        var policy = settings.retry
        policy.interval = polling.ownInterval
        policy.backoffBase = nil
        var delay = policy.backoffDelay(consecutiveErrors: polling.consecutiveErrors, using: &rng)
        if settings.misbehaviour == .tooFast { delay = delay / 2 }
        if status == 429, policy.honoursThrottle {
            delay = max(delay, policy.minimumThrottleWait, retryAfter ?? .zero)
        }
        return delay
    }

    private func record(
        _ request: InFlight,
        status: Int?,
        outcome: OAuthPollOutcome,
        interval: Duration?,
        previous: DeviceInstant?
    ) -> OAuthPollRecord {
        let interval = interval ?? .zero
        return OAuthPollRecord(
            sentAt: request.sentAt,
            answeredAt: clock.now,
            sentEpochMs: clock.epochMilliseconds(at: request.sentAt),
            answeredEpochMs: clock.epochMilliseconds(at: clock.now),
            httpStatus: status,
            outcome: outcome,
            interval: interval,
            early: previous.map { $0.duration(to: request.sentAt) < interval } ?? false
        )
    }
}
