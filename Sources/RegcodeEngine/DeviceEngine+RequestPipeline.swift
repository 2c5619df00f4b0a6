import AccessEnablerAPI
import RegcodeRecords
import RegcodeSupport

/// The single-flight request pipeline: operations wait in a queue, one is sent at a time, DCR
/// registration and token requests are put in front of a protected call when needed, and a failed
/// request is retried, recovered from or handed back as Adobe's enhanced error `action` asks
/// (``FailureMapping/remedy(for:)``): a 401 refreshes the token once with the stored credentials
/// (never re-registering for it), and what cannot get better reaches its flow at once, so the calls
/// queued behind it are not held.
extension DeviceEngine {
    enum Operation: Sendable, Equatable {
        case configure
        /// A native app opening: which profiles the backend holds (`GET /profiles`, `/profiles/{mvpd}`).
        case launchCheck(mvpd: String?)
        /// The MVPD list a native app loads for its picker.
        case pickerConfiguration
        /// The configuration fetched again after an answer with action `configuration`: the MVPD list is
        /// replaced, nothing is emitted (the app's `setRequestor` completed long ago).
        case refreshConfiguration
        /// v1, before a new code: does the backend already hold an authentication for this device?
        case checkAuthentication(mvpd: String, login: UInt64)
        /// Adopts the profile the backend already holds (v2 sessions said `authorize`, v1 `checkauthn` said 200).
        case fetchProfile(mvpd: String, login: UInt64)
        /// `mvpd` nil: a native app's code-first login (the second screen picks the MVPD).
        case createSession(mvpd: String?, login: UInt64)
        case poll(code: String, login: UInt64, planned: DeviceInstant)
        case authorize(resource: String, mvpd: String)
        /// v1's second authorization step: the media token for a granted resource.
        case mediaToken(resource: String, mvpd: String)
        case preauthorize(resources: [String], mvpd: String)
        /// `key` is the app's key dictionary, echoed in `setMetadataStatus`.
        case userMetadata(key: JSONValue, name: String, mvpd: String)
        /// `apple`: the profile came from the TV Provider, so the app is told to sign out there too (VSA203).
        case logout(mvpd: String, apple: Bool)
        /// Apple single sign-on exchange, in two calls around the TV Provider's answer (see `DeviceEngine+TVProvider`).
        case partnerSession(mvpd: String, login: UInt64)
        case partnerProfile(samlResponse: String, mvpd: String, login: UInt64)

        /// The stage the request log files the call under.
        var stage: RequestStage {
            switch self {
            case .configure, .refreshConfiguration, .pickerConfiguration: .configuration
            case .launchCheck: .profile
            case .checkAuthentication, .createSession, .partnerSession: .session
            case .partnerProfile: .profile
            case .fetchProfile: .profile
            case .poll: .poll
            case .authorize, .mediaToken, .preauthorize: .decision
            case .userMetadata: .metadata
            case .logout: .logout
            }
        }

        /// Whether the call only makes sense for an authenticated device (checked again when it is sent,
        /// since a logout may have come in between).
        var needsProfile: Bool {
            switch self {
            case .authorize, .mediaToken, .preauthorize, .userMetadata: true
            default: false
            }
        }
    }

    typealias Recovery = RequestRecovery

    /// Why a request is in flight.
    enum Purpose: Sendable {
        case register(Operation, Recovery)
        case token(Operation, Recovery)
        case operation(Operation, Recovery)

        var operation: Operation {
            switch self {
            case .register(let operation, _), .token(let operation, _), .operation(let operation, _): operation
            }
        }

        var recovery: Recovery {
            switch self {
            case .register(_, let recovery), .token(_, let recovery), .operation(_, let recovery): recovery
            }
        }

        /// The stage the request log files this request under.
        var stage: RequestStage {
            switch self {
            case .register: .registration
            case .token: .token
            case .operation(let operation, _): operation.stage
            }
        }
    }

    typealias Stage = PipelineStep

    /// The one request slot of the device: empty, a request in flight, or a request waiting on the
    /// `.retry` timer to be sent again. Queued operations wait behind it in either case.
    enum Slot: Sendable {
        case empty
        case inFlight(RequestID, Purpose, attempt: Int)
        case backingOff(Purpose, attempt: Int)
    }

    struct RequestPipeline: Sendable {
        private(set) var slot: Slot = .empty
        private(set) var queue: [Operation] = []
        private var lastRequestID: RequestID = 0

        var isIdle: Bool {
            if case .empty = slot { return true }
            return false
        }

        mutating func enqueue(_ operation: Operation) { queue.append(operation) }

        mutating func next() -> Operation? {
            guard isIdle, !queue.isEmpty else { return nil }
            return queue.removeFirst()
        }

        mutating func start(_ purpose: Purpose, attempt: Int) -> RequestID {
            lastRequestID += 1
            slot = .inFlight(lastRequestID, purpose, attempt: attempt)
            return lastRequestID
        }

        /// The purpose of the answered request, or nil for an answer nobody waits for.
        mutating func complete(_ id: RequestID) -> (purpose: Purpose, attempt: Int)? {
            guard case .inFlight(let current, let purpose, let attempt) = slot, current == id else { return nil }
            slot = .empty
            return (purpose, attempt)
        }

        mutating func backOff(_ purpose: Purpose, attempt: Int) {
            slot = .backingOff(purpose, attempt: attempt)
        }

        /// The request whose back-off ended, freeing the slot.
        mutating func endBackOff() -> (purpose: Purpose, attempt: Int)? {
            guard case .backingOff(let purpose, let attempt) = slot else { return nil }
            slot = .empty
            return (purpose, attempt)
        }

        /// Drops queued operations and a pending retry; a request in flight stays (its answer is still logged).
        mutating func dropQueued() {
            queue.removeAll()
            if case .backingOff = slot { slot = .empty }
        }
    }

    mutating func enqueue(_ operation: Operation) -> [Action] {
        pipeline.enqueue(operation)
        return pump()
    }

    /// Starts the next queued operation when nothing is in flight.
    mutating func pump() -> [Action] {
        var actions: [Action] = []
        while let operation = pipeline.next() {
            guard isCurrent(operation) else {
                abandon(operation)
                continue
            }
            if operation.needsProfile && !isAuthenticated {
                actions += answerUnauthenticated(operation)
                continue
            }
            actions += dispatch(operation)
        }
        return actions
    }

    func isCurrent(_ operation: Operation) -> Bool {
        switch operation {
        case .configure, .refreshConfiguration, .launchCheck:
            return true
        case .pickerConfiguration:
            if case .awaitingProvider = login { return true }
            return false
        case .createSession(_, let id), .checkAuthentication(_, let id), .fetchProfile(_, let id):
            if case .requestingCode(let request) = login { return request.id == id }
            return false
        case .poll(let code, let id, _):
            guard case .polling(let loop) = login, loop.id == id, loop.code.code == code else { return false }
            return clock.now < loop.expiry
        case .authorize, .mediaToken, .preauthorize, .userMetadata, .logout:
            return true
        case .partnerSession(_, let id), .partnerProfile(_, _, let id):
            if case .exchanging(let exchange) = login { return exchange.id == id }
            return false
        }
    }

    mutating func abandon(_ operation: Operation) {
        if case .poll(_, let id, _) = operation, case .polling(var loop) = login, loop.id == id {
            loop.outstanding = false
            login = .polling(loop)
        }
    }

    /// Sends `operation`, registering the client and fetching a token first when it needs them.
    mutating func dispatch(_ operation: Operation, recovery: Recovery = [], attempt: Int = 0) -> [Action] {
        let request = backendRequest(for: operation)
        if request.isProtected && settings.usesDCR {
            guard let credentials = snapshot.credentials else {
                guard let statement = settings.softwareStatement else {
                    let failure = BackendFailure.http(
                        status: 400,
                        retryAfter: nil,
                        error: EnhancedError(code: "invalid_software_statement", message: "no software statement configured")
                    )
                    return finish(operation, with: .failure(failure), timing: nil, stage: .registration)
                }
                return send(.registerClient(softwareStatement: statement), purpose: .register(operation, recovery))
            }
            if !hasUsableToken {
                return send(.obtainAccessToken(credentials), purpose: .token(operation, recovery))
            }
        }
        return send(request, purpose: .operation(operation, recovery), attempt: attempt)
    }

    /// A token is refreshed a minute before it expires so a poll never carries a dying token.
    var hasUsableToken: Bool {
        guard let token = snapshot.accessToken else { return false }
        return token.expiresEpochMs - 60_000 > clock.epochMillisecondsNow
    }

    func backendRequest(for operation: Operation) -> BackendRequest {
        switch operation {
        case .configure, .refreshConfiguration, .pickerConfiguration: .configuration
        case .launchCheck(let mvpd): .launchProfiles(mvpd: mvpd)
        case .checkAuthentication: .checkAuthentication
        case .fetchProfile(let mvpd, _): .fetchProfile(mvpd: mvpd)
        case .createSession(let mvpd, _): .createSession(mvpd: mvpd)
        case .poll(let code, _, _): .pollProfile(code: code, mvpd: pollingMVPD(code: code))
        case .authorize(let resource, let mvpd): .authorize(mvpd: mvpd, resource: resource)
        case .mediaToken(let resource, let mvpd): .mediaToken(mvpd: mvpd, resource: resource)
        case .preauthorize(let resources, let mvpd): .preauthorize(mvpd: mvpd, resources: resources)
        case .userMetadata(_, _, let mvpd): .userMetadata(mvpd: mvpd)
        case .logout(let mvpd, _): .logout(mvpd: mvpd)
        case .partnerSession(let mvpd, _): .partnerSession(mvpd: mvpd)
        case .partnerProfile(let saml, let mvpd, _): .partnerProfile(samlResponse: saml, mvpd: mvpd)
        }
    }

    /// The request goes out after its ``RequestInFlight`` record (the fleet stores it first).
    mutating func send(_ request: BackendRequest, purpose: Purpose, attempt: Int = 0) -> [Action] {
        let id = pipeline.start(purpose, attempt: attempt)
        var sent = RequestInFlight(stage: purpose.stage, endpoint: request.name, sentEpochMs: clock.epochMillisecondsNow)
        if case .operation(.poll(let code, _, let planned), _) = purpose {
            sent.pollCode = code
            sent.plannedEpochMs = clock.epochMilliseconds(at: planned)
        }
        return [.recordSent(sent), .send(id, request, context(for: request))]
    }

    var requestContext: RequestContext {
        RequestContext(
            profile: settings.profile,
            requestor: settings.requestor,
            deviceID: deviceID,
            deviceInfo: snapshot.options["device_info"] ?? deviceInfoHeader,
            accessToken: settings.usesDCR ? snapshot.accessToken?.token : nil,
            visitorID: snapshot.options["visitorID"],
            signingKeys: runtimeSigningKeys ?? settings.signingKeys,
            identity: resolvedIdentity,
            forwardedFor: settings.forwardedFor,
            sourceAddress: settings.sourceAddress,
            ssoIdentity: settings.ssoIdentity,
            partnerFrameworkStatus: tvProvider.map { PartnerFrameworkStatus(state: $0).headerValue },
            connections: settings.connections,
            deviceHeaders: rules.deviceHeaders,
            jsonCharset: rules.jsonCharset
        )
    }

    /// The fleet's identity with the persona's `User-Agent` where the fleet set none.
    var resolvedIdentity: ClientIdentity {
        guard settings.identity.userAgent == nil else { return settings.identity }
        var identity = settings.identity
        identity.userAgent = rules.defaultUserAgent
        return identity
    }

    /// Whether v1 calls are signed with the HMAC header rather than carrying a DCR bearer token.
    var signsRequests: Bool { settings.profile == .v1 && !settings.usesDCR }

    /// A 401 on an HMAC-signed call: the backend refused the signature (there is no token to refresh).
    func isSignatureRefusal(_ failure: BackendFailure) -> Bool {
        guard signsRequests, case .http(401, _, _) = failure else { return false }
        return true
    }

    /// The `status` SEC403 a refused signature is reported with.
    func signatureRefusedStatus(_ failure: BackendFailure) -> Action {
        let keys = runtimeSigningKeys ?? settings.signingKeys
        let reason =
            keys == nil
            ? "no signing keys: setRequestor needs a secret and public key"
            : "request signature refused (\(FailureMapping.describe(failure)))"
        return .emit(.status(.signatureRefused, message: reason))
    }

    /// The answer to the request in the slot: log it, then do what the failure's remedy says (retry within
    /// a bound, refresh the token, register again, fetch the configuration again), else hand the answer to
    /// its flow.
    mutating func complete(
        _ purpose: Purpose,
        attempt: Int,
        with result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming?
    ) -> [Action] {
        let operation = purpose.operation
        var log: [Action] = []
        var remedy: FailureRemedy?
        if case .failure(let failure) = result { remedy = FailureMapping.remedy(for: failure) }
        // Polls keep their own log and their own pacing (the poll loop backs off); the rest is retried here.
        let isPoll: Bool
        if case .operation(.poll, _) = purpose { isPoll = true } else { isPoll = false }
        if !isPoll {
            // A background configuration refresh is not retried: it must not hold the calls behind it.
            if case .failure(let failure) = result, case .retry(let budget)? = remedy, isCurrent(operation), operation != .refreshConfiguration,
                let delay = retryDelay(for: purpose, attempt: attempt, budget: budget, after: failure)
            {
                pipeline.backOff(purpose, attempt: attempt + 1)
                var throttled: [Action] = []
                if case .http(429, _, _) = failure {
                    throttled = [.emit(.app(.throttled(call: backendRequest(for: operation).name, waitMs: delay.milliseconds)))]
                }
                return recordRequest(purpose, result: result, timing: timing, retryDelay: delay) + throttled + [
                    .schedule(.retry, at: clock.now.advanced(by: delay))
                ]
            }
            log = recordRequest(purpose, result: result, timing: timing, retryDelay: nil)
        }
        switch purpose {
        case .register(_, let recovery):
            return log + registrationAnswered(result, for: operation, recovery: recovery, remedy: remedy)
        case .token(_, let recovery):
            return log + tokenAnswered(result, for: operation, recovery: recovery, remedy: remedy)
        case .operation(_, let recovery):
            return log + callAnswered(result, for: operation, recovery: recovery, remedy: remedy, timing: timing)
        }
    }

    /// A client registration answered: the operation it was for goes on with the new credentials, or fails.
    private mutating func registrationAnswered(
        _ result: Result<BackendResponse, BackendFailure>,
        for operation: Operation,
        recovery: Recovery,
        remedy: FailureRemedy?
    ) -> [Action] {
        switch result {
        case .success(.registered(let credentials)):
            snapshot.credentials = credentials
            return dispatch(operation, recovery: recovery)
        case .success:
            return finish(
                operation,
                with: .failure(.malformed(status: 200, reason: "unexpected answer to client registration")),
                timing: nil,
                stage: .registration
            )
        case .failure(let failure):
            return finish(operation, with: .failure(failure), timing: nil, stage: .registration) + refetchConfiguration(remedy, after: operation)
        }
    }

    /// A token request answered: the call it was for is sent with the new token, the client registers again
    /// (once) if the backend forgot it, or the operation fails.
    private mutating func tokenAnswered(
        _ result: Result<BackendResponse, BackendFailure>,
        for operation: Operation,
        recovery: Recovery,
        remedy: FailureRemedy?
    ) -> [Action] {
        switch result {
        case .success(.accessToken(let token, let expiresIn)):
            snapshot.accessToken = AccessToken(token: token, expiresEpochMs: clock.epochMillisecondsNow + expiresIn.milliseconds)
            return send(backendRequest(for: operation), purpose: .operation(operation, recovery))
        case .success:
            return finish(
                operation,
                with: .failure(.malformed(status: 200, reason: "unexpected answer to token request")),
                timing: nil,
                stage: .token
            )
        case .failure(let failure):
            if FailureMapping.isForgottenClient(failure) || remedy == .registerAgain, !recovery.contains(.registeredAgain) {
                // The backend no longer knows these credentials: register again, once.
                return registerAgain(operation, recovery: recovery)
            }
            return finish(operation, with: .failure(failure), timing: nil, stage: .token) + refetchConfiguration(remedy, after: operation)
        }
    }

    /// The call itself answered: a refused token is refreshed (or the client registers again) and the call
    /// sent again, once; else the answer goes to its flow.
    private mutating func callAnswered(
        _ result: Result<BackendResponse, BackendFailure>,
        for operation: Operation,
        recovery: Recovery,
        remedy: FailureRemedy?,
        timing: RequestTiming?
    ) -> [Action] {
        if remedy == .refreshToken || remedy == .registerAgain, settings.usesDCR, !recovery.contains(.registeredAgain) {
            // This answer is logged here: the poll loop only sees the call's final answer.
            var actions: [Action] = []
            if case .poll = operation, let timing {
                let outcome = FailureMapping.pollOutcome(of: result, profile: settings.profile)
                actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: nil)
            }
            if remedy == .refreshToken, !recovery.contains(.refreshedToken), let credentials = snapshot.credentials {
                // Refresh with the stored credentials and retry once; never re-register for this.
                snapshot.accessToken = nil
                return actions + send(.obtainAccessToken(credentials), purpose: .token(operation, recovery.union(.refreshedToken)))
            }
            // A fresh token is refused too, or the answer asks for it: register again, once.
            return actions + registerAgain(operation, recovery: recovery)
        }
        return finish(operation, with: result, timing: timing, stage: .call) + refetchConfiguration(remedy, after: operation)
    }

    /// Drops the credentials the backend forgot and registers the client again.
    mutating func registerAgain(_ operation: Operation, recovery: Recovery) -> [Action] {
        snapshot.credentials = nil
        snapshot.accessToken = nil
        return dispatch(operation, recovery: recovery.union([.refreshedToken, .registeredAgain]))
    }

    /// After an answer with action `configuration` (reported already), the MVPD list is fetched again in
    /// the background, once per such answer; never for a configuration request itself.
    mutating func refetchConfiguration(_ remedy: FailureRemedy?, after operation: Operation) -> [Action] {
        guard remedy == .refetchConfiguration else { return [] }
        switch operation {
        case .configure, .refreshConfiguration, .pickerConfiguration: return []
        default: break
        }
        // `setRequestor` may be under way or queued: it fetches the configuration anyway.
        if pipeline.queue.contains(where: { $0 == .configure || $0 == .refreshConfiguration }) { return [] }
        pipeline.enqueue(.refreshConfiguration)
        return []
    }

    /// The wait before `purpose` is sent again after `failure`, or nil when its bound is spent: transient
    /// failures at most the stage's bound of times, those whose enhanced error asks for a retry at most
    /// `actionRetries` times (`retry-after` never sooner than the answer's `Retry-After`).
    mutating func retryDelay(for purpose: Purpose, attempt: Int, budget: RetryBudget, after failure: BackendFailure) -> Duration? {
        let policy = settings.polling
        let bound: Int
        var retryAfter: Duration?
        var waitsRetryAfter = false
        switch budget {
        case .transient:
            switch purpose.operation {
            case .createSession, .checkAuthentication: bound = policy.codeRequestRetries
            default: bound = policy.stageRetries
            }
            if case .http(429, let value, _) = failure {
                waitsRetryAfter = true
                retryAfter = value
            }
        case .requested(let honoursRetryAfter):
            bound = policy.actionRetries
            if honoursRetryAfter, case .http(_, let value, _) = failure {
                waitsRetryAfter = true
                retryAfter = value
            }
        }
        var throttledBound = bound
        if case .http(429, _, _) = failure {
            // The call itself, not the registration or token in front of it, which the device retries as ever.
            if rules.reportsThrottlingAtOnce, case .operation(let operation, _) = purpose, operation.sdkReportsThrottling { return nil }
            throttledBound = min(bound, rules.throttledRetries ?? bound)
        }
        guard attempt < throttledBound else { return nil }
        let delay = policy.stageRetryDelay(throttled: waitsRetryAfter, retryAfter: retryAfter, attempt: attempt + 1, using: &rng)
        // Adobe's 429 names no wait; a native app waits at least the persona's minimum (Adobe's throttling page).
        if case .http(429, _, _) = failure, let minimum = rules.minimumWaitAfterThrottle { return max(delay, minimum) }
        return delay
    }

    /// The `.retry` timer: the request that backed off is sent again, unless its flow moved on.
    mutating func retryTimerFired() -> [Action] {
        guard let (purpose, attempt) = pipeline.endBackOff() else { return [] }
        let operation = purpose.operation
        guard isCurrent(operation) else {
            abandon(operation)
            return []
        }
        switch purpose {
        case .register(_, let recovery):
            guard let statement = settings.softwareStatement else { return dispatch(operation, recovery: recovery) }
            // The attempt count goes with the resent request, so the stage's bound holds.
            return send(.registerClient(softwareStatement: statement), purpose: purpose, attempt: attempt)
        case .token(_, let recovery):
            guard let credentials = snapshot.credentials else { return dispatch(operation, recovery: recovery) }
            return send(.obtainAccessToken(credentials), purpose: purpose, attempt: attempt)
        case .operation(_, let recovery):
            if operation.needsProfile && !isAuthenticated { return answerUnauthenticated(operation) }
            return dispatch(operation, recovery: recovery, attempt: attempt)
        }
    }

    /// One non-poll request for the request log.
    func recordRequest(
        _ purpose: Purpose,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming?,
        retryDelay: Duration?
    ) -> [Action] {
        guard let timing else { return [] }
        let status: Int?
        let outcome: RequestOutcome
        var errorCode: String?
        switch result {
        case .success:
            status = 200
            outcome = .ok
        case .failure(let failure):
            status = failure.httpStatus
            outcome = FailureMapping.requestOutcome(of: failure)
            switch failure {
            case .http(_, _, let error?): errorCode = error.code
            case .transport(_, let code?): errorCode = code
            default: break
            }
        }
        let request: BackendRequest
        switch purpose {
        case .register: request = .registerClient(softwareStatement: "")
        case .token: request = .obtainAccessToken(ClientCredentials(clientID: "", clientSecret: ""))
        case .operation(let operation, _): request = backendRequest(for: operation)
        }
        return [
            .recordRequest(
                RequestAttempt(
                    stage: purpose.stage,
                    endpoint: request.name,
                    sentEpochMs: clock.epochMilliseconds(at: timing.sentAt),
                    latencyMs: timing.latencyMilliseconds,
                    httpStatus: status,
                    outcome: outcome,
                    errorCode: errorCode,
                    retryDelayMs: retryDelay?.milliseconds
                )
            )
        ]
    }

    /// Hands an operation's final answer to the flow that asked for it.
    mutating func finish(
        _ operation: Operation,
        with result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming?,
        stage: Stage
    ) -> [Action] {
        switch operation {
        case .configure:
            return configurationFinished(result, stage: stage)
        case .launchCheck:
            return launchChecked(result)
        case .pickerConfiguration:
            return pickerConfigurationLoaded(result)
        case .refreshConfiguration:
            if case .success(.configuration(let mvpds)) = result { snapshot.mvpds = mvpds }
            return []
        case .checkAuthentication(let mvpd, let id):
            return authenticationChecked(result, mvpd: mvpd, login: id)
        case .fetchProfile(let mvpd, let id):
            return profileFetched(result, mvpd: mvpd, login: id, stage: stage)
        case .createSession(let mvpd, let id):
            return sessionFinished(result, mvpd: mvpd, login: id, stage: stage)
        case .poll:
            return pollFinished(operation, result: result, timing: timing, stage: stage)
        case .authorize(let resource, let mvpd):
            return authorizationFinished(result, resource: resource, mvpd: mvpd, stage: stage, fetchedToken: false)
        case .mediaToken(let resource, let mvpd):
            return authorizationFinished(result, resource: resource, mvpd: mvpd, stage: stage, fetchedToken: true)
        case .preauthorize(let resources, _):
            return preauthorizationFinished(result, resources: resources, stage: stage)
        case .userMetadata(let key, let name, _):
            return userMetadataFinished(result, key: key, name: name)
        case .logout(let mvpd, let apple):
            return logoutFinished(result, mvpd: mvpd, apple: apple)
        case .partnerSession(let mvpd, let id):
            return partnerSessionFinished(result, mvpd: mvpd, login: id, stage: stage)
        case .partnerProfile(_, _, let id):
            return partnerProfileFinished(result, login: id, stage: stage)
        }
    }
}

/// What a device already did to recover from a backend that forgot it, for one operation: each
/// recovery is tried once.
struct RequestRecovery: OptionSet, Sendable {
    let rawValue: UInt8
    /// The access token was refreshed after a 401.
    static let refreshedToken = RequestRecovery(rawValue: 1)
    /// The credentials were dropped and the client registered again.
    static let registeredAgain = RequestRecovery(rawValue: 2)
}
