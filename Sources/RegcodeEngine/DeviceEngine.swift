import Crypto
import Foundation
import RegcodeSupport

/// The sans-IO state machine of one emulated AccessEnabler device.
///
/// Inputs are commands, backend results and timer fires; outputs are ``DeviceAction``s. It never
/// sleeps or touches a socket, so one scheduler can drive thousands of them and tests can drive
/// one with a ``ManualClock``. At most one backend request is in flight per device: later calls
/// wait in a queue, which is also what keeps polling single-flight.
public struct DeviceEngine<C: DeviceClock>: Sendable {
    public typealias Action = DeviceAction<C.Instant>

    public let settings: DeviceSettings
    public let deviceID: String
    public internal(set) var snapshot: DeviceSnapshot

    let clock: C
    var rng: SplitMix64

    // MARK: Request pipeline

    enum Operation: Sendable, Equatable {
        case configure
        /// v1, before a new code: does the backend already hold an authentication for this device?
        case checkAuthentication(mvpd: String, flow: UInt64)
        /// Adopts the profile the backend already holds (v2 sessions said `authorize`, v1 `checkauthn` said 200).
        case fetchProfile(mvpd: String, flow: UInt64)
        case createSession(mvpd: String, flow: UInt64, attempt: Int)
        case poll(code: String, flow: UInt64, planned: C.Instant)
        case authorize(resource: String, mvpd: String)
        /// v1's second authorization step: the media token for a granted resource.
        case mediaToken(resource: String, mvpd: String)
        case preauthorize(resources: [String], mvpd: String)
        /// `key` is the app's key dictionary, echoed in `setMetadataStatus`.
        case userMetadata(key: JSONValue, name: String, mvpd: String)
        case logout(mvpd: String)

        /// Whether the call only makes sense for an authenticated device (checked again when it is sent,
        /// since a logout may have come in between).
        var needsProfile: Bool {
            switch self {
            case .authorize, .mediaToken, .preauthorize, .userMetadata: true
            default: false
            }
        }
    }

    enum Purpose: Sendable {
        case register(Operation)
        case token(Operation, afterUnauthorized: Bool)
        case operation(Operation, retriedAfterUnauthorized: Bool)
    }

    var inFlight: (id: RequestID, purpose: Purpose)?
    var queue: [Operation] = []
    var nextRequestID: RequestID = 0

    // MARK: Login flow

    struct PollLoop: Sendable {
        var flow: UInt64
        var code: IssuedCode
        var expiry: C.Instant
        var consecutiveErrors = 0
        /// A poll is queued or in flight: never arm a second one.
        var outstanding = false
    }

    enum Flow: Sendable {
        case none
        case awaitingProvider(flow: UInt64)
        case requestingCode(flow: UInt64, mvpd: String)
        case polling(PollLoop)
    }

    var flow: Flow = .none
    var flowGeneration: UInt64 = 0
    var configuring = false
    /// Calls made before `setRequestor` completed (AccessEnabler queues them).
    var pendingCommands: [DeviceCommand] = []

    // MARK: Entitlements (memory only: never in the snapshot)

    /// Keys given by the legacy `setRequestor(…secret:publicKey:)`; they replace `settings.signingKeys`.
    var runtimeSigningKeys: SigningKeys?
    /// Resources of `getAuthorization` calls waiting for the login they started.
    var pendingAuthorizations: [String] = []
    /// End of validity of the last granted authorization per resource (`getMetadata` opcode 1).
    var authorizationExpiry: [String: Int64] = [:]

    public init(settings: DeviceSettings, deviceID: String, snapshot: DeviceSnapshot = DeviceSnapshot(), clock: C, seed: UInt64) {
        self.settings = settings
        self.deviceID = deviceID
        self.snapshot = snapshot
        self.clock = clock
        self.rng = SplitMix64(seed: seed)
    }

    // MARK: Public inputs

    /// Whether the device holds an unexpired authentication profile.
    public var isAuthenticated: Bool {
        guard let profile = snapshot.profile else { return false }
        return profile.expiresEpochMs > clock.epochMillisecondsNow
    }

    /// Whether a poll loop is running.
    public var isPolling: Bool {
        if case .polling = flow { return true }
        return false
    }

    /// Picks up where a stored snapshot left off: an unexpired code keeps being polled (no new
    /// code, no re-registration); an expired one is reported as expired.
    public mutating func resume() -> [Action] {
        withPersistence { engine in
            var actions: [Action] = []
            if engine.snapshot.phase == .configuring {
                engine.snapshot.phase = engine.snapshot.mvpds == nil ? .new : .ready
            }
            if [.requestingCode, .selectingProvider].contains(engine.snapshot.phase) {
                engine.snapshot.phase = .ready
            }
            if engine.snapshot.profile != nil && !engine.isAuthenticated {
                engine.snapshot.profile = nil
            }
            if engine.snapshot.phase == .authenticated && !engine.isAuthenticated {
                engine.snapshot.phase = .ready
            }
            if let code = engine.snapshot.code {
                engine.flowGeneration += 1
                // A restarted fleet must not hit the backend with every device's poll at once:
                // the first poll after a restart lands somewhere within one interval.
                let spread = engine.settings.polling.interval * Double.random(in: 0..<1, using: &engine.rng)
                actions += engine.startPolling(code, flow: engine.flowGeneration, announce: false, firstDelay: spread)
            } else if engine.snapshot.phase == .polling {
                engine.snapshot.phase = .ready
            }
            return actions
        }
    }

    /// Applies an AccessEnabler call.
    public mutating func handle(_ command: DeviceCommand) -> [Action] {
        withPersistence { engine in engine.apply(command) }
    }

    /// Feeds back the result of a `.send` action.
    public mutating func handle(
        response: Result<BackendResponse, BackendFailure>,
        for id: RequestID,
        timing: RequestTiming<C.Instant>
    ) -> [Action] {
        withPersistence { engine in
            guard let current = engine.inFlight, current.id == id else { return [] }
            engine.inFlight = nil
            var actions = engine.complete(current.purpose, with: response, timing: timing)
            actions += engine.pump()
            return actions
        }
    }

    /// Reports that a timer armed with `.schedule` reached its deadline.
    public mutating func timerFired(_ timer: DeviceTimer) -> [Action] {
        withPersistence { engine in
            var actions: [Action]
            switch timer {
            case .poll: actions = engine.pollTimerFired()
            case .codeExpiry: actions = engine.codeExpiryFired()
            case .retry: actions = engine.retryTimerFired()
            }
            actions += engine.pump()
            return actions
        }
    }

    /// Stops every loop and timer (device removed or daemon stopping); nothing is emitted.
    public mutating func shutdown() -> [Action] {
        flowGeneration += 1
        flow = .none
        queue.removeAll()
        pendingCommands.removeAll()
        pendingAuthorizations.removeAll()
        return DeviceTimer.allCases.map { .cancel($0) }
    }

    // MARK: Commands

    mutating func apply(_ command: DeviceCommand) -> [Action] {
        switch command {
        case .setRequestor(let keys):
            if let keys { runtimeSigningKeys = keys }
            configuring = true
            snapshot.phase = .configuring
            return enqueue(.configure)
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
        if configuring || snapshot.mvpds == nil {
            pendingCommands.append(command)
            return []
        }
        switch command {
        case .checkAuthentication:
            return authenticationStatusEvents(cached: true)
        case .getAuthentication(let mvpd):
            if isAuthenticated {
                return authenticationStatusEvents(cached: true)
            }
            var actions = stopFlow()
            snapshot.renewals = 0
            if let preset = mvpd ?? settings.presetMVPD {
                actions += selectProvider(preset)
            } else {
                flowGeneration += 1
                flow = .awaitingProvider(flow: flowGeneration)
                snapshot.phase = .selectingProvider
                actions.append(.emit(.displayProviderDialog(snapshot.mvpds ?? [])))
            }
            return actions
        case .setSelectedProvider(let mvpd):
            guard let mvpd else {
                var actions = stopFlow()
                snapshot.phase = isAuthenticated ? .authenticated : .ready
                actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, AccessEnabler.providerNotSelectedError)))
                actions += failPendingAuthorizations()
                return actions
            }
            var actions = stopFlow()
            snapshot.renewals = 0
            actions += selectProvider(mvpd)
            return actions
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
        case .setRequestor, .setOptions, .getSelectedProvider:
            return []
        }
    }

    mutating func selectProvider(_ mvpd: String) -> [Action] {
        snapshot.selectedMVPD = mvpd
        var actions: [Action] = [.emit(.sendTrackingData(.mvpdSelection, [mvpd] + trackingDeviceFields))]
        actions += requestCode(mvpd: mvpd)
        return actions
    }

    mutating func requestCode(mvpd: String) -> [Action] {
        flowGeneration += 1
        flow = .requestingCode(flow: flowGeneration, mvpd: mvpd)
        snapshot.phase = .requestingCode
        // v1 cookbook step 2: a device the backend already knows is authenticated gets no new code.
        // (v2 needs no such call: `POST sessions` itself answers `authorize`.)
        if settings.profile == .v1 {
            return enqueue(.checkAuthentication(mvpd: mvpd, flow: flowGeneration))
        }
        return enqueue(.createSession(mvpd: mvpd, flow: flowGeneration, attempt: 0))
    }

    /// Ends the current login flow silently: a new code or a cancel replaces it.
    mutating func stopFlow() -> [Action] {
        let wasActive: Bool
        switch flow {
        case .none: wasActive = false
        default: wasActive = true
        }
        flowGeneration += 1
        flow = .none
        snapshot.code = nil
        guard wasActive else { return [] }
        return [.cancel(.poll), .cancel(.codeExpiry), .cancel(.retry)]
    }

    func authenticationStatusEvents(cached: Bool) -> [Action] {
        if isAuthenticated, let profile = snapshot.profile {
            return [
                .emit(.setAuthenticationStatus(AccessEnabler.statusSuccess, AccessEnabler.userAuthenticated)),
                .emit(.sendTrackingData(.authenticationDetection, authenticationTracking(profile, cached: cached))),
            ]
        }
        let none = AccessEnabler.trackingNone
        return [
            .emit(.setAuthenticationStatus(AccessEnabler.statusError, AccessEnabler.userNotAuthenticatedError)),
            .emit(.sendTrackingData(.authenticationDetection, [AccessEnabler.trackingNo, none, none, none] + trackingDeviceFields)),
        ]
    }

    // MARK: Request pipeline

    mutating func enqueue(_ operation: Operation) -> [Action] {
        queue.append(operation)
        return pump()
    }

    /// Starts the next queued operation when nothing is in flight.
    mutating func pump() -> [Action] {
        var actions: [Action] = []
        while inFlight == nil, !queue.isEmpty {
            let operation = queue.removeFirst()
            guard isCurrent(operation) else {
                actions += abandon(operation)
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
        case .configure:
            return true
        case .createSession(_, let generation, _), .checkAuthentication(_, let generation), .fetchProfile(_, let generation):
            if case .requestingCode(let current, _) = flow { return current == generation }
            return false
        case .poll(let code, let generation, _):
            guard case .polling(let loop) = flow, loop.flow == generation, loop.code.code == code else { return false }
            return clock.now < loop.expiry
        case .authorize, .mediaToken, .preauthorize, .userMetadata, .logout:
            return true
        }
    }

    mutating func abandon(_ operation: Operation) -> [Action] {
        if case .poll(_, let generation, _) = operation, case .polling(var loop) = flow, loop.flow == generation {
            loop.outstanding = false
            flow = .polling(loop)
        }
        return []
    }

    mutating func dispatch(_ operation: Operation) -> [Action] {
        let request = backendRequest(for: operation)
        if request.isProtected && settings.usesDCR {
            guard let credentials = snapshot.credentials else {
                guard let statement = settings.softwareStatement else {
                    return complete(.operation(operation, retriedAfterUnauthorized: true), with: .failure(.http(status: 400, retryAfter: nil, error: EnhancedError(code: "invalid_software_statement", message: "no software statement configured"))), timing: nil)
                }
                return send(.registerClient(softwareStatement: statement), purpose: .register(operation))
            }
            if !hasUsableToken {
                return send(.obtainAccessToken(credentials), purpose: .token(operation, afterUnauthorized: false))
            }
        }
        return send(request, purpose: .operation(operation, retriedAfterUnauthorized: false))
    }

    /// A token is refreshed a minute before it expires so a poll never carries a dying token.
    var hasUsableToken: Bool {
        guard let token = snapshot.accessToken else { return false }
        return token.expiresEpochMs - 60_000 > clock.epochMillisecondsNow
    }

    func backendRequest(for operation: Operation) -> BackendRequest {
        switch operation {
        case .configure: .configuration
        case .checkAuthentication: .checkAuthentication
        case .fetchProfile(let mvpd, _): .fetchProfile(mvpd: mvpd)
        case .createSession(let mvpd, _, _): .createSession(mvpd: mvpd)
        case .poll(let code, _, _):
            .pollProfile(code: code, mvpd: pollingMVPD(code: code))
        case .authorize(let resource, let mvpd): .authorize(mvpd: mvpd, resource: resource)
        case .mediaToken(let resource, let mvpd): .mediaToken(mvpd: mvpd, resource: resource)
        case .preauthorize(let resources, let mvpd): .preauthorize(mvpd: mvpd, resources: resources)
        case .userMetadata(_, _, let mvpd): .userMetadata(mvpd: mvpd)
        case .logout(let mvpd): .logout(mvpd: mvpd)
        }
    }

    mutating func send(_ request: BackendRequest, purpose: Purpose) -> [Action] {
        nextRequestID += 1
        inFlight = (nextRequestID, purpose)
        return [.send(nextRequestID, request, requestContext)]
    }

    var requestContext: RequestContext {
        RequestContext(
            profile: settings.profile,
            requestor: settings.requestor,
            deviceID: deviceID,
            deviceInfo: snapshot.options["device_info"] ?? settings.deviceInfo.headerValue,
            accessToken: settings.usesDCR ? snapshot.accessToken?.token : nil,
            visitorID: snapshot.options["visitorID"],
            signingKeys: runtimeSigningKeys ?? settings.signingKeys
        )
    }

    /// The MVPD of the code being polled, so the client can prefer its profile.
    func pollingMVPD(code: String) -> String? {
        if case .polling(let loop) = flow, loop.code.code == code { return loop.code.mvpd ?? snapshot.selectedMVPD }
        return snapshot.selectedMVPD
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
        let reason = keys == nil
            ? "no signing keys: setRequestor needs a secret and public key"
            : "request signature refused (\(Self.describe(failure)))"
        return .emit(.status(errorId: "SEC403", level: "error", message: reason))
    }

    mutating func complete(
        _ purpose: Purpose,
        with result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming<C.Instant>?
    ) -> [Action] {
        switch purpose {
        case .register(let operation):
            switch result {
            case .success(.registered(let credentials)):
                snapshot.credentials = credentials
                return dispatch(operation)
            case .success:
                return finish(operation, with: .failure(.malformed(status: 200, reason: "unexpected answer to client registration")), timing: nil, stage: .registration)
            case .failure(let failure):
                return finish(operation, with: .failure(failure), timing: nil, stage: .registration)
            }
        case .token(let operation, let afterUnauthorized):
            switch result {
            case .success(.accessToken(let token, let expiresIn)):
                snapshot.accessToken = AccessToken(token: token, expiresEpochMs: clock.epochMillisecondsNow + expiresIn.milliseconds)
                return send(backendRequest(for: operation), purpose: .operation(operation, retriedAfterUnauthorized: afterUnauthorized))
            case .success:
                return finish(operation, with: .failure(.malformed(status: 200, reason: "unexpected answer to token request")), timing: nil, stage: .token)
            case .failure(let failure):
                return finish(operation, with: .failure(failure), timing: nil, stage: .token)
            }
        case .operation(let operation, let retried):
            if case .failure(.http(401, _, _)) = result, !retried, settings.usesDCR, let credentials = snapshot.credentials {
                // Refresh with the stored credentials and retry once; never re-register for this.
                var actions: [Action] = []
                if case .poll = operation, let timing {
                    actions += recordPoll(operation, result: result, timing: timing, outcome: .unauthorized, nextDelay: nil)
                }
                snapshot.accessToken = nil
                actions += send(.obtainAccessToken(credentials), purpose: .token(operation, afterUnauthorized: true))
                return actions
            }
            return finish(operation, with: result, timing: timing, stage: .call)
        }
    }

    enum Stage { case registration, token, call }

    mutating func finish(
        _ operation: Operation,
        with result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming<C.Instant>?,
        stage: Stage
    ) -> [Action] {
        switch operation {
        case .configure:
            return configurationFinished(result, stage: stage)
        case .checkAuthentication(let mvpd, let generation):
            return authenticationChecked(result, mvpd: mvpd, flow: generation)
        case .fetchProfile(let mvpd, let generation):
            return profileFetched(result, mvpd: mvpd, flow: generation, stage: stage)
        case .createSession(let mvpd, let generation, let attempt):
            return sessionFinished(result, mvpd: mvpd, flow: generation, attempt: attempt, stage: stage)
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
        case .logout:
            return logoutFinished(result)
        }
    }

    // MARK: setRequestor

    mutating func configurationFinished(_ result: Result<BackendResponse, BackendFailure>, stage: Stage) -> [Action] {
        configuring = false
        var actions: [Action] = []
        switch result {
        case .success(.configuration(let mvpds)):
            snapshot.mvpds = mvpds
            snapshot.phase = isAuthenticated ? .authenticated : (snapshot.code != nil ? .polling : .ready)
            actions.append(.emit(.setRequestorComplete(AccessEnabler.statusSuccess)))
            let queued = pendingCommands
            pendingCommands = []
            for command in queued { actions += apply(command) }
        default:
            let failure: BackendFailure
            if case .failure(let error) = result { failure = error } else { failure = .malformed(status: 200, reason: "unexpected answer to configuration request") }
            let errorID: String
            switch stage {
            case .registration: errorID = "R400"
            case .token: errorID = "R401"
            case .call: errorID = isSignatureRefusal(failure) ? "SEC403" : Self.configurationStatusCode(for: failure)
            }
            snapshot.phase = snapshot.mvpds == nil ? .failed : snapshot.phase
            if snapshot.mvpds != nil && snapshot.phase == .configuring { snapshot.phase = .ready }
            pendingCommands = []
            actions.append(.emit(.status(errorId: errorID, level: "error", message: Self.describe(failure))))
            actions.append(.emit(.setRequestorComplete(AccessEnabler.statusError)))
        }
        return actions
    }

    static func configurationStatusCode(for failure: BackendFailure) -> String {
        switch failure {
        case .transport: "CFG404"
        case .malformed: "CFG500"
        case .http(let status, _, _):
            switch status {
            case 401: "R401"
            case 429: "CFG429"
            case 500...599: "CFG\(status)"
            default: "CFG400"
            }
        }
    }

    // MARK: Codes

    mutating func sessionFinished(
        _ result: Result<BackendResponse, BackendFailure>,
        mvpd: String,
        flow generation: UInt64,
        attempt: Int,
        stage: Stage
    ) -> [Action] {
        guard case .requestingCode(let current, _) = flow, current == generation else { return [] }
        switch result {
        case .success(.session(let code)):
            snapshot.code = code
            return startPolling(code, flow: generation, announce: true)
        case .success(.alreadyAuthenticated(let mvpd)):
            return enqueue(.fetchProfile(mvpd: mvpd, flow: generation))
        default:
            let failure: BackendFailure
            if case .failure(let error) = result { failure = error } else { failure = .malformed(status: 200, reason: "unexpected answer to session request") }
            if stage == .call, Self.isTransient(failure), attempt < settings.polling.codeRequestRetries {
                let delay = settings.polling.backoffDelay(consecutiveErrors: attempt + 1, using: &rng)
                retryPlan = (generation, mvpd, attempt + 1)
                return [.schedule(.retry, at: clock.now.advanced(by: delay))]
            }
            return codeRequestFailed(failure, stage: stage)
        }
    }

    /// No code could be obtained: `status` REG500 (after R400/R401/SEC403 when those explain it), then
    /// `setAuthenticationStatus(0, "Generic Authentication Error")`.
    mutating func codeRequestFailed(_ failure: BackendFailure, stage: Stage) -> [Action] {
        flow = .none
        snapshot.phase = isAuthenticated ? .authenticated : .ready
        var actions: [Action] = []
        switch stage {
        case .registration: actions.append(.emit(.status(errorId: "R400", level: "error", message: Self.describe(failure))))
        case .token: actions.append(.emit(.status(errorId: "R401", level: "error", message: Self.describe(failure))))
        case .call: if isSignatureRefusal(failure) { actions.append(signatureRefusedStatus(failure)) }
        }
        actions.append(.emit(.status(errorId: "REG500", level: "error", message: "error fetching registration code: \(Self.describe(failure))")))
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, AccessEnabler.genericAuthenticationError)))
        actions += failPendingAuthorizations()
        return actions
    }

    /// v1 `checkauthn`: 200 → adopt the backend's AuthN token; anything else → ask for a code (whose own
    /// failure, if any, is what gets reported).
    mutating func authenticationChecked(_ result: Result<BackendResponse, BackendFailure>, mvpd: String, flow generation: UInt64) -> [Action] {
        guard case .requestingCode(let current, _) = flow, current == generation else { return [] }
        if case .success(.authenticationStatus(true)) = result {
            return enqueue(.fetchProfile(mvpd: mvpd, flow: generation))
        }
        return enqueue(.createSession(mvpd: mvpd, flow: generation, attempt: 0))
    }

    /// The profile the backend said it holds: adopt it, or (v1) fall back to a new code. On v2 the sessions
    /// endpoint already said `authorize`, so a missing profile there is a backend fault, reported as REG500.
    mutating func profileFetched(
        _ result: Result<BackendResponse, BackendFailure>,
        mvpd: String,
        flow generation: UInt64,
        stage: Stage
    ) -> [Action] {
        guard case .requestingCode(let current, _) = flow, current == generation else { return [] }
        if case .success(.profile(let profile?)) = result, profile.expiresEpochMs > clock.epochMillisecondsNow {
            return adopt(profile, cached: false)
        }
        if settings.profile == .v1 {
            return enqueue(.createSession(mvpd: mvpd, flow: generation, attempt: 0))
        }
        let failure: BackendFailure
        switch result {
        case .failure(let error): failure = error
        default: failure = .malformed(status: 200, reason: "sessions answered authorize but no profile for \(mvpd) was returned")
        }
        return codeRequestFailed(failure, stage: stage)
    }

    /// The device is authenticated (second-screen login done, or a profile the backend already held):
    /// `setAuthenticationStatus(1, "")`, `sendTrackingData(authenticationDetection)`, then the authorizations
    /// `getAuthorization` left waiting.
    mutating func adopt(_ profile: AuthProfile, cached: Bool) -> [Action] {
        flowGeneration += 1
        flow = .none
        pollDeadline = nil
        snapshot.code = nil
        snapshot.profile = profile
        snapshot.selectedMVPD = profile.mvpd
        snapshot.phase = .authenticated
        var actions: [Action] = [.cancel(.poll), .cancel(.codeExpiry)]
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusSuccess, AccessEnabler.userAuthenticated)))
        actions.append(.emit(.sendTrackingData(.authenticationDetection, authenticationTracking(profile, cached: cached))))
        let waiting = pendingAuthorizations
        pendingAuthorizations = []
        for resource in waiting {
            actions += enqueue(.authorize(resource: resource, mvpd: profile.mvpd))
        }
        return actions
    }

    var retryPlan: (flow: UInt64, mvpd: String, attempt: Int)?

    mutating func retryTimerFired() -> [Action] {
        guard let plan = retryPlan else { return [] }
        retryPlan = nil
        guard case .requestingCode(let current, _) = flow, current == plan.flow else { return [] }
        return enqueue(.createSession(mvpd: plan.mvpd, flow: plan.flow, attempt: plan.attempt))
    }

    static func isTransient(_ failure: BackendFailure) -> Bool {
        switch failure {
        case .transport, .malformed: true
        case .http(let status, _, _): status == 429 || status >= 500
        }
    }

    // MARK: Polling

    mutating func startPolling(_ code: IssuedCode, flow generation: UInt64, announce: Bool, firstDelay: Duration? = nil) -> [Action] {
        let expiry = clock.instant(forEpochMilliseconds: code.expiresEpochMs)
        var actions: [Action] = []
        if announce {
            actions.append(.emit(.status(errorId: "REGCODE", level: "success", message: code.code, extra: ["expires": .int(code.expiresEpochMs)])))
        }
        guard clock.now < expiry else {
            flow = .polling(PollLoop(flow: generation, code: code, expiry: expiry))
            return actions + codeExpiryFired()
        }
        snapshot.phase = .polling
        var loop = PollLoop(flow: generation, code: code, expiry: expiry)
        actions.append(.schedule(.codeExpiry, at: expiry))
        let delay = firstDelay ?? settings.polling.firstPollDelay
        if delay <= .zero {
            loop.outstanding = true
            flow = .polling(loop)
            actions += enqueue(.poll(code: code.code, flow: generation, planned: clock.now))
        } else {
            flow = .polling(loop)
            actions += schedulePoll(at: clock.now.advanced(by: delay), loop: loop)
        }
        return actions
    }

    var pollDeadline: C.Instant?

    mutating func schedulePoll(at instant: C.Instant, loop: PollLoop) -> [Action] {
        // Never poll past expiry: the expiry timer takes over.
        guard instant < loop.expiry else {
            pollDeadline = nil
            return []
        }
        pollDeadline = instant
        return [.schedule(.poll, at: instant)]
    }

    mutating func pollTimerFired() -> [Action] {
        guard let deadline = pollDeadline, clock.now >= deadline else { return [] }
        pollDeadline = nil
        guard case .polling(var loop) = flow, !loop.outstanding, clock.now < loop.expiry else { return [] }
        loop.outstanding = true
        flow = .polling(loop)
        return enqueue(.poll(code: loop.code.code, flow: loop.flow, planned: deadline))
    }

    mutating func pollFinished(
        _ operation: Operation,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming<C.Instant>?,
        stage: Stage
    ) -> [Action] {
        guard case .poll(let code, let generation, let planned) = operation else { return [] }
        let outcome = Self.outcome(of: result, stage: stage)
        guard case .polling(var loop) = flow, loop.flow == generation, loop.code.code == code, clock.now < loop.expiry else {
            // The loop ended while this poll was out; its answer is logged but not acted on.
            if let timing { return recordPoll(operation, result: result, timing: timing, outcome: .abandoned, nextDelay: nil) }
            return []
        }
        loop.outstanding = false
        var actions: [Action] = []
        let policy = settings.polling

        if case .success(.profile(let profile?)) = result {
            if let timing { actions += recordPoll(operation, result: result, timing: timing, outcome: .authenticated, nextDelay: nil) }
            return actions + adopt(profile, cached: false)
        }

        if case .failure(let failure) = result, isSignatureRefusal(failure) {
            // Polling on cannot fix a refused signature: stop and say why.
            if let timing { actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: nil) }
            flow = .polling(loop)
            return actions + giveUp(reason: Self.describe(failure), status: signatureRefusedStatus(failure))
        }

        if outcome == .codeInvalid {
            if let timing { actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: nil) }
            flow = .polling(loop)
            return actions + codeEnded(reason: "registration code \(code) is no longer valid")
        }

        let next: C.Instant
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
                if let timing { actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: nil) }
                flow = .polling(loop)
                return actions + giveUp(reason: "\(loop.consecutiveErrors) consecutive polling errors")
            }
            next = clock.now.advanced(by: policy.backoffDelay(consecutiveErrors: loop.consecutiveErrors, using: &rng))
        }
        flow = .polling(loop)
        let willPoll = next < loop.expiry
        if let timing {
            actions += recordPoll(operation, result: result, timing: timing, outcome: outcome, nextDelay: willPoll ? clock.now.duration(to: next) : nil)
        }
        actions += schedulePoll(at: next, loop: loop)
        return actions
    }

    static func outcome(of result: Result<BackendResponse, BackendFailure>, stage: Stage) -> PollOutcome {
        switch result {
        case .success(.profile(nil)): return .pending
        case .success(.profile(.some)): return .authenticated
        case .success: return .malformed
        case .failure(let failure):
            switch failure {
            case .transport: return .transportError
            case .malformed: return .malformed
            case .http(let status, _, let error):
                switch status {
                case 429: return .throttled
                case 401: return .unauthorized
                case 410: return .codeInvalid
                case 400 where ["invalid_authentication_session", "invalid_parameter_code"].contains(error?.code ?? ""):
                    return .codeInvalid
                case 500...599: return .serverError
                default: return .clientError
                }
            }
        }
    }

    mutating func recordPoll(
        _ operation: Operation,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming<C.Instant>,
        outcome: PollOutcome,
        nextDelay: Duration?
    ) -> [Action] {
        guard case .poll(let code, _, let planned) = operation else { return [] }
        var status: Int?
        switch result {
        case .success: status = 200
        case .failure(let failure): status = failure.httpStatus
        }
        let attempt = PollAttempt(
            code: code,
            plannedEpochMs: clock.epochMilliseconds(at: planned),
            sentEpochMs: clock.epochMilliseconds(at: timing.sentAt),
            latencyMs: Double(timing.latency.milliseconds) + Double(timing.latency.components.attoseconds % 1_000_000_000_000_000) / 1e15,
            httpStatus: status,
            outcome: outcome,
            nextDelayMs: nextDelay?.milliseconds
        )
        return [.recordPoll(attempt)]
    }

    mutating func codeExpiryFired() -> [Action] {
        guard case .polling(let loop) = flow, clock.now >= loop.expiry else { return [] }
        return codeEnded(reason: "registration code \(loop.code.code) expired")
    }

    /// The code can no longer be completed: renew it if the policy allows, else report and stop.
    mutating func codeEnded(reason: String) -> [Action] {
        guard case .polling(let loop) = flow else { return [] }
        var actions: [Action] = [.cancel(.poll), .cancel(.codeExpiry)]
        pollDeadline = nil
        if case .renew(let times) = settings.polling.onExpiry, snapshot.renewals < times {
            snapshot.renewals += 1
            snapshot.code = nil
            actions += requestCode(mvpd: loop.code.mvpd ?? snapshot.selectedMVPD ?? settings.presetMVPD ?? "")
            return actions
        }
        flowGeneration += 1
        flow = .none
        snapshot.code = nil
        snapshot.phase = isAuthenticated ? .authenticated : .ready
        actions.append(.emit(.status(errorId: "REG410", level: "error", message: reason, extra: ["code": .string(loop.code.code), "expires": .int(loop.code.expiresEpochMs)])))
        actions.append(.emit(.setAuthenticationStatus(AccessEnabler.statusError, AccessEnabler.genericAuthenticationError)))
        actions += failPendingAuthorizations()
        return actions
    }

    /// Stops polling for good: `status` (REG500 unless given), then `setAuthenticationStatus(0, …)`.
    mutating func giveUp(reason: String, status: Action? = nil) -> [Action] {
        guard case .polling = flow else { return [] }
        flowGeneration += 1
        flow = .none
        pollDeadline = nil
        snapshot.code = nil
        snapshot.phase = isAuthenticated ? .authenticated : .ready
        return [
            .cancel(.poll), .cancel(.codeExpiry),
            status ?? .emit(.status(errorId: "REG500", level: "error", message: reason)),
            .emit(.setAuthenticationStatus(AccessEnabler.statusError, AccessEnabler.genericAuthenticationError)),
        ] + failPendingAuthorizations()
    }

    // MARK: Helpers

    /// Device type, client type and OS as the tracking arrays end with them.
    var trackingDeviceFields: [String] {
        ["unknown", "ios", settings.deviceInfo.osName]
    }

    func authenticationTracking(_ profile: AuthProfile, cached: Bool) -> [String] {
        [AccessEnabler.trackingYes, profile.mvpd, Self.guid(profile) ?? AccessEnabler.trackingNone, cached ? AccessEnabler.trackingYes : AccessEnabler.trackingNo]
            + trackingDeviceFields
    }

    /// The tracking GUID: the MD5 of the user id, as AccessEnabler hashes it.
    static func guid(_ profile: AuthProfile) -> String? {
        profile.userID.map { Insecure.MD5.hash(data: Data($0.utf8)).map { String(format: "%02x", $0) }.joined() }
    }

    static func describe(_ failure: BackendFailure) -> String {
        switch failure {
        case .transport(let reason): return "network error: \(reason)"
        case .malformed(let status, let reason): return "malformed answer (HTTP \(status)): \(reason)"
        case .http(let status, _, let error):
            if let error { return "HTTP \(status) \(error.code)\(error.message.map { ": \($0)" } ?? "")" }
            return "HTTP \(status)"
        }
    }

    /// Runs `body`, then prepends a `.persist` when the durable state changed, so storage sees
    /// the state before the events that announce it.
    mutating func withPersistence(_ body: (inout Self) -> [Action]) -> [Action] {
        let before = snapshot
        var actions = body(&self)
        if snapshot != before {
            actions.insert(.persist(snapshot), at: 0)
        }
        return actions
    }
}
