import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeRecords
import RegcodeSupport

/// An OAuth device as the fleet drives a device: the engine's commands, answers and timers in, the engine's actions
/// out, so the fleet's one timer heap, call queue, write-ahead records and store serve it as they serve an Adobe
/// Pass device. The protocol itself is ``OAuthDeviceMachine``'s; this type only translates.
///
/// What the translation decides:
/// - commands: `getAuthentication` starts a device authorization, `logout` revokes, `setSelectedProvider(nil)`
///   cancels a running login; the other AccessEnabler calls mean nothing to an OAuth device and do nothing;
/// - requests go out as ``BackendRequest/wire(_:)``; a relative URL (no `issuer` configured) is the backend's;
/// - the poll log: `code` is the user code; `planned_at` is when the device scheduled the poll, but never before the
///   protocol allows it (the previous poll plus the interval in force), so a poll sent too early (a misbehaving
///   device) shows as negative lateness and the report counts it as early;
/// - the other requests go to the request log by stage: discovery `configuration`, device authorization `session`,
///   refresh `token`, revocation `logout`, a use of the token `metadata`;
/// - the stored state: the machine's snapshot in ``DeviceSnapshot/oauth``, the user code as the device's pending
///   code (so code fates and the login log work as for Adobe), and the grant as a `regular` profile of the provider.
package struct OAuthDeviceEngine: Sendable {
    package typealias Action = DeviceAction

    package let settings: DeviceSettings
    package let deviceID: String
    package private(set) var machine: OAuthDeviceMachine
    private let clock: any DeviceClock
    private let context: RequestContext
    /// What the device keeps beyond the machine's snapshot (options, and the profile's first expiry).
    private var stored: DeviceSnapshot
    /// The request on the wire, for its log row.
    private var call: Call?
    /// The user code shown, kept after the login ends so the last poll's row still names it.
    private var userCode: String?
    /// When the poll timer was last armed for (epoch ms), and when the previous poll of the code went out (for the
    /// first poll: when the code was shown).
    private var pollScheduledEpochMs: Int64?
    private var previousPollSentEpochMs: Int64?

    private struct Call: Sendable {
        var id: RequestID
        var purpose: OAuthRequestPurpose
        var stage: RequestStage
        var name: String
        var sentEpochMs: Int64
        var plannedEpochMs: Int64?
    }

    /// - Parameters:
    ///   - settings: An OAuth device's settings (``DeviceSettings/oauth`` set), secrets included.
    ///   - snapshot: The stored state; its ``DeviceSnapshot/oauth`` is resumed by ``resume()``.
    package init(settings: DeviceSettings, deviceID: String, snapshot: DeviceSnapshot = DeviceSnapshot(), clock: any DeviceClock, seed: UInt64) {
        self.settings = settings
        self.deviceID = deviceID
        self.clock = clock
        self.stored = snapshot
        self.userCode = snapshot.oauth?.code?.userCode
        let configuration = settings.oauth ?? OAuthDeviceConfiguration()
        self.machine = OAuthDeviceMachine(
            settings: OAuthDeviceSettings(configuration: configuration, polling: settings.polling),
            clock: clock,
            seed: seed,
            snapshot: snapshot.oauth
        )
        self.context = RequestContext(
            profile: settings.profile,
            requestor: settings.requestor,
            deviceID: deviceID,
            deviceInfo: "",
            identity: settings.identity,
            forwardedFor: settings.forwardedFor,
            sourceAddress: settings.sourceAddress,
            connections: settings.connections
        )
    }

    // MARK: What the fleet reads

    package var phase: DevicePhase {
        switch machine.state {
        case .idle: stored.oauth == nil && userCode == nil ? .new : .ready
        case .discovering: .configuring
        case .authorizing: .requestingCode
        case .polling: .polling
        case .authorized, .refreshing, .revoking: .authenticated
        case .denied, .expired, .failed: .failed
        }
    }

    /// The durable state as the store keeps it.
    package var snapshot: DeviceSnapshot { deviceSnapshot(machine.snapshot) }

    package var isAuthenticated: Bool { machine.isAuthorized }

    // MARK: Inputs

    package mutating func resume() -> [Action] {
        translate(machine.resume())
    }

    package mutating func handle(_ command: DeviceCommand) -> [Action] {
        switch command {
        case .getAuthentication: translate(machine.handle(.login))
        case .logout: translate(machine.handle(.logout))
        case .setSelectedProvider(nil): translate(machine.handle(.cancel))
        default: []
        }
    }

    package mutating func handle(response result: Result<BackendResponse, BackendFailure>, for id: RequestID, timing: RequestTiming) -> [Action] {
        let answer: Result<OAuthHTTPResponse, OAuthTransportFailure>
        switch result {
        case .success(.wire(let response)):
            var headers: [OAuthHeader] = []
            if let retryAfter = response.retryAfter { headers.append(OAuthHeader("Retry-After", retryAfter)) }
            answer = .success(OAuthHTTPResponse(status: response.status, headers: headers, body: Data(response.body)))
        case .success:
            answer = .failure(OAuthTransportFailure("the transport answered in Adobe Pass terms"))
        case .failure(.transport(let reason, _)):
            answer = .failure(OAuthTransportFailure(reason))
        case .failure(.http(let status, _, _)):
            answer = .success(OAuthHTTPResponse(status: status))
        case .failure(.malformed(let status, let reason)):
            answer = .failure(OAuthTransportFailure("HTTP \(status): \(reason)"))
        }
        var actions: [Action] = []
        if let call, call.id == id, call.stage != .poll {
            actions.append(.recordRequest(Self.requestAttempt(call, answer, latency: timing.latencyMilliseconds)))
        }
        // The call stays known while its answer is translated: the poll's row takes its planned time.
        actions += translate(machine.handle(answer, for: OAuthRequestID(rawValue: id), sentAt: timing.sentAt))
        if call?.id == id { call = nil }
        return actions
    }

    package mutating func timerFired(_ timer: DeviceTimer) -> [Action] {
        let oauthTimer: OAuthDeviceTimer
        switch timer {
        case .poll: oauthTimer = .poll
        case .codeExpiry: oauthTimer = .codeExpiry
        case .retry: oauthTimer = .retry
        case .refresh: oauthTimer = .refresh
        case .exercise: oauthTimer = .exercise
        }
        return translate(machine.timerFired(oauthTimer))
    }

    package mutating func shutdown() -> [Action] {
        translate(machine.shutdown())
    }

    // MARK: Translation

    private mutating func translate(_ actions: [OAuthDeviceAction]) -> [Action] {
        var translated: [Action] = []
        translated.reserveCapacity(actions.count + 1)
        for action in actions {
            switch action {
            case .send(let request):
                translated += send(request)
            case .schedule(let timer, let instant):
                if timer == .poll { pollScheduledEpochMs = clock.epochMilliseconds(at: instant) }
                translated.append(.schedule(Self.deviceTimer(timer), at: instant))
            case .cancel(let timer):
                translated.append(.cancel(Self.deviceTimer(timer)))
            case .persist(let snapshot):
                translated.append(.persist(persisting(snapshot)))
            case .emit(let event):
                translated += ending(for: event)
                translated.append(.emit(.oauth(event)))
            case .recordPoll(let record):
                translated.append(.recordPoll(pollAttempt(record)))
            }
        }
        return translated
    }

    private mutating func send(_ request: OAuthRequest) -> [Action] {
        let (stage, name) = Self.describe(request.purpose)
        let now = clock.epochMillisecondsNow
        var planned: Int64?
        var pollCode: String?
        if request.purpose == .poll, case .polling(let polling) = machine.state {
            pollCode = polling.shown.userCode
            let allowed = previousPollSentEpochMs.map { $0 + polling.interval.milliseconds }
            planned = max(pollScheduledEpochMs ?? now, allowed ?? Int64.min)
            previousPollSentEpochMs = now
        }
        call = Call(id: request.id.rawValue, purpose: request.purpose, stage: stage, name: name, sentEpochMs: now, plannedEpochMs: planned)
        let wire = WireRequest(
            name: name,
            method: request.method == .get ? .get : .post,
            url: request.url,
            headers: request.headers.map { WireRequest.Header($0.name, $0.value) },
            body: Array(request.body)
        )
        return [
            .recordSent(RequestInFlight(stage: stage, endpoint: name, sentEpochMs: now, pollCode: pollCode, plannedEpochMs: planned)),
            .send(request.id.rawValue, .wire(wire), context),
        ]
    }

    /// The code's ending, said just before the event that ends it (the store closes the pending code with it).
    private mutating func ending(for event: OAuthDeviceEvent) -> [Action] {
        let outcome: CodeOutcome
        switch event {
        case .codeShown(let shown):
            userCode = shown.userCode
            // The first poll's interval counts from the code (RFC 8628 §3.5: "the client SHOULD wait at least
            // `interval` seconds between polling requests"; Authlib answers an immediate poll `slow_down`).
            previousPollSentEpochMs = clock.epochMillisecondsNow
            return []
        case .authorized: outcome = .authenticated
        case .expired: outcome = .expired
        case .cancelled: outcome = .cancelled
        case .denied(let error): outcome = .failed(reason: error.code)
        case .failed(let failure) where failure.stage == .poll: outcome = .failed(reason: failure.description)
        default: return []
        }
        guard let userCode else { return [] }
        return [.endCode(CodeEnding(code: userCode, outcome: outcome))]
    }

    private mutating func persisting(_ oauth: OAuthDeviceSnapshot) -> DeviceSnapshot {
        let snapshot = deviceSnapshot(oauth)
        stored = snapshot
        return snapshot
    }

    private func deviceSnapshot(_ oauth: OAuthDeviceSnapshot) -> DeviceSnapshot {
        var snapshot = stored
        snapshot.oauth = oauth
        snapshot.phase = phase
        snapshot.code = oauth.code.map { IssuedCode(code: $0.userCode, expiresEpochMs: $0.expiresEpochMs, mvpd: nil) }
        if let tokens = oauth.tokens {
            // The grant, as the login log and `devices.get` see it. Kept across refreshes: a refresh is not a login.
            let provider = settings.oauth?.provider.rawValue ?? OAuthProvider.generic.rawValue
            if snapshot.profile?.mvpd != provider {
                snapshot.profile = AuthProfile(mvpd: provider, userID: nil, expiresEpochMs: tokens.accessExpiresEpochMs ?? Int64.max)
            }
        } else {
            snapshot.profile = nil
        }
        return snapshot
    }

    private mutating func pollAttempt(_ record: OAuthPollRecord) -> PollAttempt {
        var planned = record.sentEpochMs
        if let call, call.purpose == .poll, let callPlanned = call.plannedEpochMs { planned = callPlanned }
        var nextDelay: Int64?
        if case .polling(let polling) = machine.state, case .waiting(let until) = polling.step {
            nextDelay = max(0, clock.now.duration(to: until).milliseconds)
        }
        return PollAttempt(
            code: userCode ?? "",
            plannedEpochMs: planned,
            sentEpochMs: record.sentEpochMs,
            latencyMs: Double(record.answeredEpochMs - record.sentEpochMs),
            httpStatus: record.httpStatus,
            outcome: Self.pollOutcome(record.outcome),
            nextDelayMs: nextDelay
        )
    }

    // MARK: Tables

    private static func deviceTimer(_ timer: OAuthDeviceTimer) -> DeviceTimer {
        switch timer {
        case .poll: .poll
        case .codeExpiry: .codeExpiry
        case .retry: .retry
        case .refresh: .refresh
        case .exercise: .exercise
        }
    }

    /// The request log's stage and the endpoint's name of a request.
    private static func describe(_ purpose: OAuthRequestPurpose) -> (RequestStage, String) {
        switch purpose {
        case .discovery: (.configuration, "oauth.discovery")
        case .deviceAuthorization: (.session, "oauth.device_authorization")
        case .poll: (.poll, "oauth.token")
        case .refresh: (.token, "oauth.refresh")
        case .revocation(let hint): (.logout, "oauth.revocation.\(hint.rawValue)")
        case .exercise(let endpoint): (.metadata, "oauth.\(endpoint.rawValue)")
        }
    }

    static func pollOutcome(_ outcome: OAuthPollOutcome) -> PollOutcome {
        switch outcome {
        case .authorized: .authenticated
        case .authorizationPending: .pending
        case .slowDown: .slowDown
        case .denied: .denied
        case .expired: .expired
        case .error: .clientError
        case .serverError(let status): status == 429 ? .throttled : .serverError
        case .unexpected: .malformed
        case .transportFailure: .transportError
        case .abandoned: .abandoned
        }
    }

    private static func requestAttempt(_ call: Call, _ answer: Result<OAuthHTTPResponse, OAuthTransportFailure>, latency: Double) -> RequestAttempt {
        let status = try? answer.get().status
        let outcome: RequestOutcome
        var errorCode: String?
        switch answer {
        case .failure: outcome = .transportError
        case .success(let response):
            switch response.status {
            case 200..<300: outcome = .ok
            case 429: outcome = .throttled
            case 401: outcome = .unauthorized
            case 400..<500: outcome = .clientError
            case 500...: outcome = .serverError
            default: outcome = .malformed
            }
            if response.status >= 400, let error = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) {
                errorCode = error.error.code
            }
        }
        return RequestAttempt(
            stage: call.stage,
            endpoint: call.name,
            sentEpochMs: call.sentEpochMs,
            latencyMs: latency,
            httpStatus: status,
            outcome: outcome,
            errorCode: errorCode
        )
    }
}

extension OAuthDeviceSettings {
    /// The machine's settings from a device's configuration: the provider's row, the endpoints and client, and the
    /// device's poll policy for back-off and jitter. A private key that does not parse is left out, so the first
    /// login fails with the settings' own reason (`private_key_jwt needs a private key`).
    package init(configuration: OAuthDeviceConfiguration, polling: PollPolicy) {
        var signingKey: OAuthSigningKey?
        if let pem = configuration.privateKeyPEM, let algorithm = OAuthSigningKey.Algorithm(rawValue: configuration.signingAlgorithm.uppercased()) {
            signingKey = try? OAuthSigningKey(pem: pem, algorithm: algorithm, keyID: configuration.keyID)
        }
        self.init(
            provider: configuration.provider,
            baseURL: configuration.issuer ?? "",
            client: OAuthClientCredentials(
                id: configuration.clientID,
                secret: configuration.clientSecret,
                signingKey: signingKey,
                authentication: configuration.clientAuthentication
            )
        )
        switch configuration.discovery?.lowercased() {
        case nil: break
        case "off": discovery = .off
        case "provider": discovery = .provider
        default: discovery = .url(configuration.discovery ?? "")
        }
        endpoints = configuration.endpoints
        placeholders = configuration.placeholders
        scope = configuration.scope
        audience = configuration.audience
        resource = configuration.resource
        if let endpoint = configuration.exercise {
            exercise = OAuthTokenExercise(endpoint: endpoint, every: .milliseconds(configuration.exerciseEveryMs))
        }
        refreshMargin = .milliseconds(configuration.refreshMarginMs)
        misbehaviour = configuration.misbehave
        retry = polling
    }
}
