import RegcodeEngine
import RegcodeRecords
import RegcodeTestSupport

/// Drives one engine on a manual clock and keeps what it asked for: the request it has out,
/// the timers it armed, the events it emitted, the polls it logged.
struct EngineHarness {
    typealias Engine = DeviceEngine
    typealias Instant = ManualClock.Instant

    let clock: ManualClock
    var engine: Engine
    var events: [DeviceEvent] = []
    var polls: [PollAttempt] = []
    var requestLog: [RequestAttempt] = []
    var endedCodes: [CodeEnding] = []
    var timers: [DeviceTimer: Instant] = [:]
    var outstanding: (id: RequestID, request: BackendRequest, context: RequestContext, sentAt: Instant)?
    var sent: [(request: BackendRequest, at: Instant)] = []
    /// What the engine recorded of each request before sending it, in order.
    var sentRecords: [RequestInFlight] = []
    var unsentRecord: RequestInFlight?
    var persisted: [DeviceSnapshot] = []

    static let statement = "eyJhbGciOiJub25lIn0.eyJzb2Z0d2FyZV9pZCI6InRlc3QifQ.c2ln"
    static let mvpds = [MVPD(id: "Cablevision", displayName: "Optimum"), MVPD(id: "DTV", displayName: "DIRECTV")]

    /// A device on `profile`; v1 devices sign with `signingKeys` instead of using DCR when keys are given.
    init(
        policy: PollPolicy = PollPolicy(),
        presetMVPD: String? = nil,
        snapshot: DeviceSnapshot = DeviceSnapshot(),
        seed: UInt64 = 42,
        profile: APIProfile = .v2,
        signingKeys: SigningKeys? = nil,
        sso: DeviceSSOSettings? = nil,
        originEpochMs: Int64 = 1_763_720_000_000,
        configure: (inout DeviceSettings) -> Void = { _ in }
    ) {
        clock = ManualClock(originEpochMs: originEpochMs)
        var settings = DeviceSettings(name: "stb-1", requestor: "REF30")
        settings.sso = sso
        settings.profile = profile
        settings.softwareStatement = profile == .v1 && signingKeys != nil ? nil : Self.statement
        settings.signingKeys = signingKeys
        settings.polling = policy
        settings.presetMVPD = presetMVPD
        configure(&settings)
        engine = Engine(settings: settings, deviceID: "device-1", snapshot: snapshot, clock: clock, seed: seed)
    }

    var now: Instant { clock.now }

    mutating func apply(_ actions: [Engine.Action]) {
        for action in actions {
            switch action {
            case .recordSent(let record):
                precondition(unsentRecord == nil, "engine recorded a request it did not send")
                unsentRecord = record
            case .send(let id, let request, let context):
                precondition(outstanding == nil, "engine sent a second request while one was in flight")
                // Every request is recorded just before it goes out (write-ahead), under its own name.
                precondition(unsentRecord?.endpoint == request.name, "engine sent \(request.name) without recording it first")
                sentRecords.append(unsentRecord!)
                unsentRecord = nil
                outstanding = (id, request, context, clock.now)
                sent.append((request, clock.now))
            case .schedule(let timer, let instant):
                timers[timer] = instant
            case .cancel(let timer):
                timers[timer] = nil
            case .emit(let event):
                events.append(event)
            case .persist(let snapshot):
                persisted.append(snapshot)
            case .recordPoll(let attempt):
                polls.append(attempt)
            case .recordRequest(let attempt):
                requestLog.append(attempt)
            case .endCode(let ending):
                endedCodes.append(ending)
            case .storeTokens:
                preconditionFailure("the engine never stores shared tokens itself")
            }
        }
    }

    mutating func command(_ command: DeviceCommand) {
        apply(engine.handle(command))
    }

    mutating func resume() {
        apply(engine.resume())
    }

    /// Answers the outstanding request after `latency`.
    mutating func respond(_ result: Result<BackendResponse, BackendFailure>, latency: Duration = .milliseconds(20)) {
        guard let request = outstanding else { fatalError("no request in flight") }
        clock.advance(by: latency)
        outstanding = nil
        apply(engine.handle(response: result, for: request.id, timing: RequestTiming(sentAt: request.sentAt, latency: latency)))
    }

    /// Answers the outstanding request with `failure`, and every retry of it, until the engine stops
    /// retrying (its stage's bound is spent); returns how many times the request was sent.
    @discardableResult
    mutating func respondUntilRetriesRunOut(_ failure: BackendFailure) -> Int {
        var sends = 1
        respond(.failure(failure))
        while outstanding == nil, let deadline = timers[.retry] {
            clock.advance(to: deadline)
            timers[.retry] = nil
            apply(engine.timerFired(.retry))
            guard outstanding != nil else { break }
            sends += 1
            respond(.failure(failure))
        }
        return sends
    }

    /// Answers DCR and configuration calls the way a healthy backend does, until something else is out.
    mutating func answerHousekeeping() {
        while let request = outstanding?.request {
            switch request {
            case .registerClient:
                respond(.success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
            case .obtainAccessToken:
                respond(.success(.accessToken(token: "token-\(sent.count)", expiresIn: .seconds(21600))))
            case .configuration:
                respond(.success(.configuration(mvpds: Self.mvpds)))
            default:
                return
            }
        }
    }

    /// Moves time to the earliest armed timer and fires it; returns which one fired.
    @discardableResult
    mutating func fireNextTimer() -> DeviceTimer? {
        guard let (timer, deadline) = timers.min(by: { $0.value < $1.value }) else { return nil }
        clock.advance(to: deadline)
        timers[timer] = nil
        apply(engine.timerFired(timer))
        return timer
    }

    var eventNames: [String] { events.map(\.name) }

    /// Brings a fresh device to a code being polled, answering everything up to the first poll.
    mutating func startLogin(codeTTL: Duration = .seconds(1800), code: String = "ABC1234") {
        command(.setRequestor(signingKeys: nil))
        answerHousekeeping()
        command(.checkAuthentication)
        command(.getAuthentication(mvpd: nil))
        command(.setSelectedProvider("Cablevision"))
        answerHousekeeping()
        if outstanding?.request == .checkAuthentication {
            // v1 asks whether the backend already knows the device before it asks for a code.
            respond(.success(.authenticationStatus(false)))
        }
        respondWithCode(code, ttl: codeTTL)
    }

    /// A device that went through the whole login: the first poll found the approved profile.
    static func authenticated(profile: APIProfile = .v2, signingKeys: SigningKeys? = nil) -> EngineHarness {
        var h = EngineHarness(profile: profile, signingKeys: signingKeys)
        h.startLogin()
        h.respond(.success(.profile(approved)))
        return h
    }

    /// Events emitted since `mark` (an index into `events`).
    func events(since mark: Int) -> [DeviceEvent] { Array(events[mark...]) }

    /// Requests sent since `mark` (an index into `sent`).
    func requests(since mark: Int) -> [BackendRequest] { sent[mark...].map(\.request) }

    mutating func respondWithCode(_ code: String, ttl: Duration = .seconds(1800)) {
        let expires = clock.epochMilliseconds(at: clock.now) + ttl.milliseconds
        respond(.success(.session(IssuedCode(code: code, expiresEpochMs: expires, mvpd: "Cablevision"))), latency: .zero)
    }

    static let approved = AuthProfile(mvpd: "Cablevision", userID: "user-1", expiresEpochMs: 1_763_720_000_000 + 30 * 86_400_000)
}
