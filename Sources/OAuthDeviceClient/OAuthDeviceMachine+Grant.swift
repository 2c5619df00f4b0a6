import Foundation
import OAuthDeviceGrant
import RegcodeEngine

/// The grant: refreshing before expiry (RFC 6749 §6, rotation kept), exercising the token (userinfo, RFC 7662
/// introspection), and revoking on logout (RFC 7009).
extension OAuthDeviceMachine {
    // MARK: Holding tokens

    /// The tokens of a successful poll.
    mutating func authorize(_ response: OAuthTokenResponse) -> [Action] {
        let tokens = storedTokens(response, previousRefreshToken: nil)
        let grant = Grant(tokens: tokens, accessExpiry: accessExpiry(tokens), exercise: nil)
        let event = OAuthDeviceEvent.authorized(
            scope: response.scope,
            expiresIn: response.expiresIn.map { .seconds($0) },
            refreshable: tokens.refreshToken != nil
        )
        return hold(grant) + [.emit(event)]
    }

    /// Tokens from a snapshot: refreshed now if they are (nearly) expired, else held until their refresh is due.
    mutating func adopt(_ tokens: OAuthDeviceSnapshot.Tokens) -> [Action] {
        hold(Grant(tokens: tokens, accessExpiry: accessExpiry(tokens), exercise: nil))
    }

    private func storedTokens(_ response: OAuthTokenResponse, previousRefreshToken: String?) -> OAuthDeviceSnapshot.Tokens {
        OAuthDeviceSnapshot.Tokens(
            accessToken: response.accessToken,
            tokenType: response.tokenType,
            // A refresh answer without a refresh token keeps the old one (RFC 6749 §6); with one, it replaces it.
            refreshToken: response.refreshToken ?? previousRefreshToken,
            idToken: response.idToken,
            scope: response.scope,
            accessExpiresEpochMs: response.expiresIn.map { clock.epochMilliseconds(at: clock.now.advanced(by: .seconds($0))) }
        )
    }

    private func accessExpiry(_ tokens: OAuthDeviceSnapshot.Tokens) -> DeviceInstant? {
        tokens.accessExpiresEpochMs.map { clock.instant(forEpochMilliseconds: $0) }
    }

    /// Enters `.authorized` with the refresh and exercise timers armed (or refreshing at once when due).
    private mutating func hold(_ grant: Grant) -> [Action] {
        var grant = grant
        var actions: [Action] = []
        grant.refreshAt = refreshInstant(grant)
        if let refreshAt = grant.refreshAt {
            if refreshAt <= clock.now {
                state = .refreshing(grant, Attempt(number: 1, step: .due))
                return [.cancel(.exercise)]
            }
            actions.append(.schedule(.refresh, at: refreshAt))
        }
        if let exercise = settings.exercise {
            let at = clock.now.advanced(by: exercise.every)
            grant.exercise = .waiting(until: at)
            actions.append(.schedule(.exercise, at: at))
        }
        state = .authorized(grant)
        return actions
    }

    /// When to refresh: `refreshMargin` before the access token expires, but never earlier than half its remaining
    /// life, so a token shorter-lived than the margin is refreshed at half-life rather than in a loop; nil without a
    /// refresh token or an expiry. Fixed when the grant is taken (``Grant/refreshAt``).
    private func refreshInstant(_ grant: Grant) -> DeviceInstant? {
        guard grant.tokens.refreshToken != nil, let expiry = grant.accessExpiry, hasEndpoint(.token) else { return nil }
        let remaining = clock.now.duration(to: expiry)
        return expiry.advanced(by: .zero - min(settings.refreshMargin, max(.zero, remaining / 2)))
    }

    // MARK: Refresh

    mutating func refreshTimerFired() -> [Action] {
        guard case .authorized(let grant) = state, let at = grant.refreshAt, clock.now >= at else { return [] }
        state = .refreshing(grant, Attempt(number: 1, step: .due))
        return [.cancel(.exercise)]
    }

    mutating func refreshAnswered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        guard case .refreshing(let grant, let attempt) = state, attempt.step == .sent(request.id) else {
            // A logout came while the refresh was out: revoke what the refresh issued, not what it replaced.
            if case .revoking(var revocation) = state, case .tokens(let response) = tokenAnswer(result) {
                revocation.tokens = storedTokens(response, previousRefreshToken: revocation.tokens.refreshToken)
                state = .revoking(revocation)
            }
            return []
        }
        switch tokenAnswer(result) {
        case .tokens(let response):
            let previous = grant.tokens.refreshToken
            let tokens = storedTokens(response, previousRefreshToken: previous)
            let rotated = response.refreshToken != nil && response.refreshToken != previous
            let event = OAuthDeviceEvent.tokenRefreshed(expiresIn: response.expiresIn.map { .seconds($0) }, rotated: rotated)
            return [.cancel(.retry)] + hold(Grant(tokens: tokens, accessExpiry: accessExpiry(tokens), exercise: nil)) + [.emit(event)]
        case .error(let error, _):
            // `invalid_grant`: the refresh token was revoked, expired or already rotated away; the tokens are dead.
            return fail(OAuthFailure(stage: .refresh, reason: .tokenError(error.error, description: error.errorDescription)))
        case .unexpected(let status, _):
            return fail(OAuthFailure(stage: .refresh, reason: .httpStatus(status)))
        case .retryable:
            return retryOrFail(.refresh, attempt: attempt, result) { machine, attempt in machine.state = .refreshing(grant, attempt) }
        }
    }

    // MARK: Exercise

    mutating func exerciseTimerFired() -> [Action] {
        guard case .authorized(var grant) = state, case .waiting(let until)? = grant.exercise, clock.now >= until else { return [] }
        grant.exercise = .due
        state = .authorized(grant)
        return []
    }

    mutating func exerciseAnswered(
        _ request: InFlight,
        endpoint: OAuthEndpoint,
        _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>
    ) -> [Action] {
        guard case .authorized(var grant) = state, grant.exercise == .sent(request.id), let exercise = settings.exercise else { return [] }
        let response = try? result.get()
        var active: Bool?
        if endpoint == .introspection, let response, response.status == 200 {
            active = Self.decode(Introspection.self, from: response.body)?.active
        }
        var actions: [Action] = [.emit(.tokenExercised(endpoint, status: response?.status, active: active))]
        // A refused token is refreshed now, when it can be (it may have been revoked at the server: the refresh
        // says so).
        let refused = response?.status == 401 || active == false
        if refused, grant.tokens.refreshToken != nil, hasEndpoint(.token) {
            grant.exercise = nil
            state = .refreshing(grant, Attempt(number: 1, step: .due))
            return actions + [.cancel(.refresh)]
        }
        let at = clock.now.advanced(by: exercise.every)
        grant.exercise = .waiting(until: at)
        actions.append(.schedule(.exercise, at: at))
        state = .authorized(grant)
        return actions
    }

    private struct Introspection: Decodable {
        var active: Bool
    }

    // MARK: Logout

    mutating func logout() -> [Action] {
        let tokens: OAuthDeviceSnapshot.Tokens
        switch state {
        case .discovering, .authorizing, .polling:
            return cancelLogin()
        case .revoking:
            return []
        case .idle, .denied, .expired, .failed:
            state = .idle
            return [.emit(.loggedOut)]
        case .authorized(let grant), .refreshing(let grant, _):
            tokens = grant.tokens
        }
        let timers = cancelTimers([.refresh, .exercise, .retry])
        let remaining = hasEndpoint(.revocation) ? settings.rules.revocableTokens.filter { tokens.token($0) != nil } : []
        guard !remaining.isEmpty else {
            state = .idle
            return timers + [.emit(.loggedOut)]
        }
        state = .revoking(Revocation(tokens: tokens, remaining: remaining, attempt: Attempt(number: 1, step: .due)))
        return timers
    }

    mutating func revocationAnswered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        guard case .revoking(var revocation) = state, revocation.attempt.step == .sent(request.id),
            let hint = revocation.remaining.first
        else { return [] }
        // RFC 7009 §2.2.1: 503 (and any transport failure or 5xx) is retried; other answers are final for this token.
        if Self.isRetryable(result), let delay = stageRetryDelay(after: revocation.attempt.number, result) {
            let until = clock.now.advanced(by: delay)
            revocation.attempt = Attempt(number: revocation.attempt.number + 1, step: .waiting(until: until))
            state = .revoking(revocation)
            return [.schedule(.retry, at: until)]
        }
        var actions: [Action]
        switch result {
        case .success(let response): actions = [.emit(.revoked(hint, status: response.status))]
        case .failure(let failure):
            let reason = OAuthFailure.Reason.retriesExhausted(attempts: revocation.attempt.number, last: failure.reason)
            actions = [.emit(.failed(OAuthFailure(stage: .revocation, reason: reason)))]
        }
        revocation.remaining.removeFirst()
        guard !revocation.remaining.isEmpty else {
            state = .idle
            return actions + [.cancel(.retry), .emit(.loggedOut)]
        }
        revocation.attempt = Attempt(number: 1, step: .due)
        state = .revoking(revocation)
        return actions
    }
}
