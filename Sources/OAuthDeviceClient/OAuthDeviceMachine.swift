import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// The sans-IO state machine of one OAuth 2.0 device (RFC 8628).
///
/// Inputs are commands, HTTP answers, timer fires and a stored snapshot (``resume()``); outputs are
/// ``OAuthDeviceAction``s, in order. It never sleeps or touches a socket: a driver sends the requests it describes,
/// arms its timers on the same ``DeviceClock`` and feeds both back. At most one request is in flight (``inFlight``):
/// whatever the state wants next waits until the answer, even one the state no longer cares about, is back.
///
/// Driving it (the fleet's part): make one machine per device with the settings, the fleet's clock and a seed; call
/// ``resume()`` once with the stored snapshot; then, for each action in order: `.send` → make the HTTP call (method,
/// URL, headers, form body; never log headers or form, they carry credentials) and feed the answer or the transport
/// failure to ``handle(_:for:sentAt:)``; `.schedule` / `.cancel` → one timer per ``OAuthDeviceTimer`` (re-arming
/// replaces), fired with ``timerFired(_:)``; `.persist` → store the snapshot (before publishing the events that
/// follow it); `.emit` → publish; `.recordPoll` → the poll log. Commands come in with ``handle(_:)``.
///
/// Where things are decided: the login (discovery, device authorization, the poll loop and each poll's outcome) in
/// `OAuthDeviceMachine+Login`; the grant (refresh, revocation, exercising the token) in `OAuthDeviceMachine+Grant`;
/// how requests are built and answers read (client authentication, the provider row's quirks) in
/// `OAuthDeviceMachine+Wire`.
package struct OAuthDeviceMachine: Sendable {
    package typealias Action = OAuthDeviceAction

    /// Where the device is; each case carries exactly what is valid in it.
    package enum State: Sendable, Hashable {
        /// No login running, no tokens.
        case idle
        /// Reading the metadata document before the first login.
        case discovering(Attempt)
        /// Asking for a device code.
        case authorizing(Attempt)
        case polling(Polling)
        case authorized(Grant)
        case refreshing(Grant, Attempt)
        /// Logging out: revoking the tokens one by one.
        case revoking(Revocation)
        /// The last login ended: the user refused.
        case denied(OAuthTokenError)
        /// The last login ended: the code expired.
        case expired
        /// The last login or grant ended in failure.
        case failed(OAuthFailure)
    }

    /// Where a request of a stage is.
    package enum Step: Sendable, Hashable {
        /// To be sent as soon as nothing else is in flight.
        case due
        /// Waiting for its timer.
        case waiting(until: DeviceInstant)
        case sent(OAuthRequestID)
    }

    /// A request that is retried after transport errors, 5xx and 429 (bounded by `retry.stageRetries`).
    package struct Attempt: Sendable, Hashable {
        /// 1 for the first try.
        package var number: Int
        package var step: Step
    }

    /// A device code being polled.
    package struct Polling: Sendable, Hashable {
        package var deviceCode: String
        package var shown: OAuthUserCode
        /// When the code expires: no poll is sent at or after it.
        package var expiry: DeviceInstant
        /// The same in wall-clock time, fixed when the code was issued (what the snapshot stores).
        package var expiresEpochMs: Int64
        /// The interval in force (RFC 8628 §3.5): the server's, plus every `slow_down`.
        package var interval: Duration
        /// The interval this device keeps: ``interval``, unless it ignores `slow_down` (``OAuthMisbehaviour``).
        package var ownInterval: Duration
        /// The next poll: `.waiting(until:)` is its instant.
        package var step: Step
        package var consecutiveErrors = 0
        /// When the previous poll of this code was sent, to tell early polls.
        package var lastSentAt: DeviceInstant?
    }

    /// The tokens a device holds.
    package struct Grant: Sendable, Hashable {
        package var tokens: OAuthDeviceSnapshot.Tokens
        package var accessExpiry: DeviceInstant?
        /// The next use of the access token; nil when the settings exercise none.
        package var exercise: Step?
        /// When the access token is refreshed; nil when it cannot be.
        package var refreshAt: DeviceInstant? = nil
    }

    /// A logout: the tokens still to revoke, in order.
    package struct Revocation: Sendable, Hashable {
        package var tokens: OAuthDeviceSnapshot.Tokens
        package var remaining: [OAuthTokenTypeHint]
        package var attempt: Attempt
    }

    /// The request on the wire.
    struct InFlight: Sendable, Hashable {
        var id: OAuthRequestID
        var purpose: OAuthRequestPurpose
        var sentAt: DeviceInstant
    }

    package let settings: OAuthDeviceSettings
    let clock: any DeviceClock
    var rng: SplitMix64
    package internal(set) var state: State = .idle
    /// Endpoints the discovery document named; nil until read.
    var discovered: [OAuthEndpoint: String]?
    var inFlight: InFlight?
    var requestIDs: UInt64 = 0
    /// Read by ``resume()``.
    private var stored: OAuthDeviceSnapshot?

    package init(settings: OAuthDeviceSettings, clock: any DeviceClock, seed: UInt64, snapshot: OAuthDeviceSnapshot? = nil) {
        self.settings = settings
        self.clock = clock
        self.rng = SplitMix64(seed: seed)
        // State of another client is not this device's: it starts afresh.
        self.stored = snapshot?.clientID == settings.client.id ? snapshot : nil
        self.discovered = stored?.discovered
    }

    /// What must survive a restart, computed from the state.
    package var snapshot: OAuthDeviceSnapshot {
        var snapshot = OAuthDeviceSnapshot(clientID: settings.client.id)
        snapshot.discovered = discovered
        switch state {
        case .polling(let polling):
            snapshot.code = OAuthDeviceSnapshot.PendingCode(
                deviceCode: polling.deviceCode,
                userCode: polling.shown.userCode,
                verificationURI: polling.shown.verificationURI,
                verificationURIComplete: polling.shown.verificationURIComplete,
                message: polling.shown.message,
                expiresEpochMs: polling.expiresEpochMs,
                intervalMs: polling.interval.milliseconds,
                ownIntervalMs: polling.ownInterval.milliseconds
            )
        case .authorized(let grant), .refreshing(let grant, _):
            snapshot.tokens = grant.tokens
        case .revoking(let revocation):
            snapshot.tokens = revocation.tokens
        case .idle, .discovering, .authorizing, .denied, .expired, .failed:
            break
        }
        return snapshot
    }

    /// Whether the device holds tokens.
    package var isAuthorized: Bool {
        switch state {
        case .authorized, .refreshing: true
        default: false
        }
    }

    // MARK: Inputs

    /// Picks up where the snapshot given at init left off: tokens are kept (and refreshed if due), an unexpired code
    /// is polled again one interval from now (the last poll before the restart is unknown), an expired one is
    /// reported as expired.
    package mutating func resume() -> [Action] {
        guard let stored else { return [] }
        self.stored = nil
        return withPersistence { machine in
            if let tokens = stored.tokens { return machine.adopt(tokens) }
            if let code = stored.code { return machine.resumePolling(code) }
            return []
        }
    }

    package mutating func handle(_ command: OAuthDeviceCommand) -> [Action] {
        withPersistence { machine in
            var actions: [Action]
            switch command {
            case .login: actions = machine.login()
            case .logout: actions = machine.logout()
            case .cancel: actions = machine.cancelLogin()
            }
            return actions + machine.pump()
        }
    }

    /// Feeds back the answer of a `.send` action. `sentAt` is when the request left, when the driver queued it
    /// (default: when the machine asked for it).
    package mutating func handle(
        _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>,
        for id: OAuthRequestID,
        sentAt: DeviceInstant? = nil
    ) -> [Action] {
        guard var request = inFlight, request.id == id else { return [] }
        if let sentAt { request.sentAt = sentAt }
        inFlight = nil
        return withPersistence { machine in
            machine.answered(request, result) + machine.pump()
        }
    }

    /// Reports that a timer armed with `.schedule` reached its deadline.
    package mutating func timerFired(_ timer: OAuthDeviceTimer) -> [Action] {
        withPersistence { machine in
            var actions: [Action]
            switch timer {
            case .poll: actions = machine.pollTimerFired()
            case .codeExpiry: actions = machine.codeExpiryFired()
            case .retry: actions = machine.retryTimerFired()
            case .refresh: actions = machine.refreshTimerFired()
            case .exercise: actions = machine.exerciseTimerFired()
            }
            return actions + machine.pump()
        }
    }

    /// Stops every timer (device removed, daemon stopping); nothing is emitted and the snapshot is kept.
    package mutating func shutdown() -> [Action] {
        OAuthDeviceTimer.allCases.map { .cancel($0) }
    }

    // MARK: Dispatch

    private mutating func answered(_ request: InFlight, _ result: Result<OAuthHTTPResponse, OAuthTransportFailure>) -> [Action] {
        switch request.purpose {
        case .discovery: discoveryAnswered(request, result)
        case .deviceAuthorization: deviceAuthorizationAnswered(request, result)
        case .poll: pollAnswered(request, result)
        case .refresh: refreshAnswered(request, result)
        case .revocation: revocationAnswered(request, result)
        case .exercise(let endpoint): exerciseAnswered(request, endpoint: endpoint, result)
        }
    }

    private mutating func retryTimerFired() -> [Action] {
        func due(_ attempt: inout Attempt) {
            if case .waiting(let until) = attempt.step, clock.now >= until { attempt.step = .due }
        }
        switch state {
        case .discovering(var attempt):
            due(&attempt)
            state = .discovering(attempt)
        case .authorizing(var attempt):
            due(&attempt)
            state = .authorizing(attempt)
        case .refreshing(let grant, var attempt):
            due(&attempt)
            state = .refreshing(grant, attempt)
        case .revoking(var revocation):
            due(&revocation.attempt)
            state = .revoking(revocation)
        case .idle, .polling, .authorized, .denied, .expired, .failed:
            break
        }
        return []
    }

    /// Sends what the state has due, when nothing is in flight.
    mutating func pump() -> [Action] {
        guard inFlight == nil else { return [] }
        switch state {
        case .discovering(var attempt) where attempt.step == .due:
            return send(.discovery) { machine, id in
                attempt.step = .sent(id)
                machine.state = .discovering(attempt)
            }
        case .authorizing(var attempt) where attempt.step == .due:
            return send(.deviceAuthorization) { machine, id in
                attempt.step = .sent(id)
                machine.state = .authorizing(attempt)
            }
        case .polling(var polling) where polling.step == .due:
            return send(.poll) { machine, id in
                polling.step = .sent(id)
                machine.state = .polling(polling)
            }
        case .authorized(var grant) where grant.exercise == .due:
            guard let endpoint = settings.exercise?.endpoint else { return [] }
            return send(.exercise(endpoint)) { machine, id in
                grant.exercise = .sent(id)
                machine.state = .authorized(grant)
            }
        case .refreshing(let grant, var attempt) where attempt.step == .due:
            return send(.refresh) { machine, id in
                attempt.step = .sent(id)
                machine.state = .refreshing(grant, attempt)
            }
        case .revoking(var revocation) where revocation.attempt.step == .due:
            guard let hint = revocation.remaining.first else { return [] }
            return send(.revocation(hint)) { machine, id in
                revocation.attempt.step = .sent(id)
                machine.state = .revoking(revocation)
            }
        default:
            return []
        }
    }

    /// Builds and sends the request of `purpose`, then lets `mark` record its id in the state; a request that
    /// cannot be built ends the stage as failed.
    private mutating func send(_ purpose: OAuthRequestPurpose, mark: (inout Self, OAuthRequestID) -> Void) -> [Action] {
        requestIDs += 1
        let id = OAuthRequestID(rawValue: requestIDs)
        let request: OAuthRequest
        do {
            request = try makeRequest(purpose, id: id)
        } catch {
            return fail(OAuthFailure(stage: purpose.stage, reason: .configuration(error.description)))
        }
        inFlight = InFlight(id: id, purpose: purpose, sentAt: clock.now)
        mark(&self, id)
        return [.send(request)]
    }

    /// Ends whatever runs with `failure`: timers cancelled, tokens forgotten.
    mutating func fail(_ failure: OAuthFailure) -> [Action] {
        state = .failed(failure)
        return cancelTimers() + [.emit(.failed(failure))]
    }

    func cancelTimers(_ timers: [OAuthDeviceTimer] = OAuthDeviceTimer.allCases) -> [Action] {
        timers.map { .cancel($0) }
    }

    mutating func nextRandom() -> UInt64 { rng.next() }

    /// Runs `body`, then prepends a `.persist` when the durable state changed, so storage sees the state before the
    /// events that announce it.
    private mutating func withPersistence(_ body: (inout Self) -> [Action]) -> [Action] {
        let before = snapshot
        var actions = body(&self)
        let after = snapshot
        if after != before { actions.insert(.persist(after), at: 0) }
        return actions
    }
}

extension OAuthRequestPurpose {
    var stage: OAuthStage {
        switch self {
        case .discovery: .discovery
        case .deviceAuthorization: .deviceAuthorization
        case .poll: .poll
        case .refresh: .refresh
        case .revocation: .revocation
        case .exercise: .exercise
        }
    }
}
