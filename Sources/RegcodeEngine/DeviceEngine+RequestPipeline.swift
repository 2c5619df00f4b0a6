import AccessEnablerAPI
import RegcodeSupport

/// The single-flight request pipeline: operations wait in a queue, one is sent at a time, DCR
/// registration and token requests are put in front of a protected call when needed, and a 401
/// refreshes the token once with the stored credentials (never re-registering for it).
extension DeviceEngine {
    enum Operation: Sendable, Equatable {
        case configure
        /// v1, before a new code: does the backend already hold an authentication for this device?
        case checkAuthentication(mvpd: String, login: UInt64)
        /// Adopts the profile the backend already holds (v2 sessions said `authorize`, v1 `checkauthn` said 200).
        case fetchProfile(mvpd: String, login: UInt64)
        case createSession(mvpd: String, login: UInt64, attempt: Int)
        case poll(code: String, login: UInt64, planned: C.Instant)
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

    /// Why a request is in flight.
    enum Purpose: Sendable {
        case register(Operation)
        case token(Operation, afterUnauthorized: Bool)
        case operation(Operation, retriedAfterUnauthorized: Bool)
    }

    typealias Stage = PipelineStep

    struct RequestPipeline: Sendable {
        private(set) var inFlight: (id: RequestID, purpose: Purpose)?
        private(set) var queue: [Operation] = []
        private var lastRequestID: RequestID = 0

        var isIdle: Bool { inFlight == nil }

        mutating func enqueue(_ operation: Operation) { queue.append(operation) }

        mutating func next() -> Operation? {
            guard inFlight == nil, !queue.isEmpty else { return nil }
            return queue.removeFirst()
        }

        mutating func start(_ purpose: Purpose) -> RequestID {
            lastRequestID += 1
            inFlight = (lastRequestID, purpose)
            return lastRequestID
        }

        /// The purpose of the answered request, or nil for an answer nobody waits for.
        mutating func complete(_ id: RequestID) -> Purpose? {
            guard let current = inFlight, current.id == id else { return nil }
            inFlight = nil
            return current.purpose
        }

        mutating func dropQueued() { queue.removeAll() }
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
        case .configure:
            return true
        case .createSession(_, let id, _), .checkAuthentication(_, let id), .fetchProfile(_, let id):
            if case .requestingCode(let request) = login { return request.id == id }
            return false
        case .poll(let code, let id, _):
            guard case .polling(let loop) = login, loop.id == id, loop.code.code == code else { return false }
            return clock.now < loop.expiry
        case .authorize, .mediaToken, .preauthorize, .userMetadata, .logout:
            return true
        }
    }

    mutating func abandon(_ operation: Operation) {
        if case .poll(_, let id, _) = operation, case .polling(var loop) = login, loop.id == id {
            loop.outstanding = false
            login = .polling(loop)
        }
    }

    mutating func dispatch(_ operation: Operation) -> [Action] {
        let request = backendRequest(for: operation)
        if request.isProtected && settings.usesDCR {
            guard let credentials = snapshot.credentials else {
                guard let statement = settings.softwareStatement else {
                    let failure = BackendFailure.http(
                        status: 400,
                        retryAfter: nil,
                        error: EnhancedError(code: "invalid_software_statement", message: "no software statement configured")
                    )
                    return complete(.operation(operation, retriedAfterUnauthorized: true), with: .failure(failure), timing: nil)
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
        case .poll(let code, _, _): .pollProfile(code: code, mvpd: pollingMVPD(code: code))
        case .authorize(let resource, let mvpd): .authorize(mvpd: mvpd, resource: resource)
        case .mediaToken(let resource, let mvpd): .mediaToken(mvpd: mvpd, resource: resource)
        case .preauthorize(let resources, let mvpd): .preauthorize(mvpd: mvpd, resources: resources)
        case .userMetadata(_, _, let mvpd): .userMetadata(mvpd: mvpd)
        case .logout(let mvpd): .logout(mvpd: mvpd)
        }
    }

    mutating func send(_ request: BackendRequest, purpose: Purpose) -> [Action] {
        let id = pipeline.start(purpose)
        return [.send(id, request, requestContext)]
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
                return finish(
                    operation,
                    with: .failure(.malformed(status: 200, reason: "unexpected answer to client registration")),
                    timing: nil,
                    stage: .registration
                )
            case .failure(let failure):
                return finish(operation, with: .failure(failure), timing: nil, stage: .registration)
            }
        case .token(let operation, let afterUnauthorized):
            switch result {
            case .success(.accessToken(let token, let expiresIn)):
                snapshot.accessToken = AccessToken(token: token, expiresEpochMs: clock.epochMillisecondsNow + expiresIn.milliseconds)
                return send(backendRequest(for: operation), purpose: .operation(operation, retriedAfterUnauthorized: afterUnauthorized))
            case .success:
                return finish(
                    operation,
                    with: .failure(.malformed(status: 200, reason: "unexpected answer to token request")),
                    timing: nil,
                    stage: .token
                )
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

    /// Hands an operation's final answer to the flow that asked for it.
    mutating func finish(
        _ operation: Operation,
        with result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming<C.Instant>?,
        stage: Stage
    ) -> [Action] {
        switch operation {
        case .configure:
            return configurationFinished(result, stage: stage)
        case .checkAuthentication(let mvpd, let id):
            return authenticationChecked(result, mvpd: mvpd, login: id)
        case .fetchProfile(let mvpd, let id):
            return profileFetched(result, mvpd: mvpd, login: id, stage: stage)
        case .createSession(let mvpd, let id, let attempt):
            return sessionFinished(result, mvpd: mvpd, login: id, attempt: attempt, stage: stage)
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
}
