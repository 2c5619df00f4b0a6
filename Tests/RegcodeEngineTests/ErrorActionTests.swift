import AccessEnablerAPI
import RegcodeEngine
import Testing

/// Adobe's enhanced error `action` decides, on every call, whether the device retries, refreshes its token,
/// registers again, fetches the configuration again, asks for a new authentication or reports the failure
/// at once (reference §9.2–9.5; docs/explanation/device-behaviour.md, "Errors as Adobe asks").
@Suite struct ErrorActionTests {
    static func failure(
        _ action: ErrorAction?,
        status: Int = 500,
        retryAfter: Duration? = nil,
        code: String = "internal_server_error"
    )
        -> BackendFailure
    {
        .http(status: status, retryAfter: retryAfter, error: EnhancedError(status: status, code: code, action: action))
    }

    /// A 500 whose enhanced error's action no retry, token or registration can help: reported at once.
    static let finalActions: [ErrorAction] = [.none, .authentication, .authorization, .degradation]

    // MARK: The action, typed

    @Test func actionsReadAsAdobeSpellsThemAndUnknownOnesSurvive() throws {
        let spellings = [
            "none", "retry", "retry-after", "refresh", "configuration", "application-registration", "authentication", "authorization",
            "degradation",
        ]
        #expect(ErrorAction.known.map(\.rawValue) == spellings)
        for spelling in spellings { #expect(ErrorAction(rawValue: spelling).rawValue == spelling) }
        #expect(ErrorAction(rawValue: "reboot") == .unknown("reboot"))
        #expect(ErrorAction(rawValue: "reboot").rawValue == "reboot")
    }

    @Test func anUnknownActionReadsAsNoAction() {
        // A server error: the transient rule, retried within the stage's bound.
        var h = Self.registering()
        #expect(h.respondUntilRetriesRunOut(Self.failure(.unknown("reboot"))) == PollPolicy().stageRetries + 1)
        // A client error: final at once.
        var g = Self.authorizing()
        g.respond(.failure(Self.failure(.unknown("reboot"), status: 403, code: "reboot_required")))
        #expect(g.timers[.retry] == nil)
        #expect(g.events.contains { $0.statusErrorID == "Z500" })
    }

    // MARK: Registration

    /// A device whose `setRequestor` has its client registration out.
    static func registering(_ policy: PollPolicy = PollPolicy()) -> EngineHarness {
        var h = EngineHarness(policy: policy)
        h.command(.setRequestor(signingKeys: nil))
        #expect(h.outstanding?.request == .registerClient(softwareStatement: EngineHarness.statement))
        return h
    }

    @Test(arguments: finalActions + [.configuration, .refresh, .applicationRegistration])
    func registrationGivesUpAtOnce(action: ErrorAction) {
        var h = Self.registering()
        h.respond(.failure(Self.failure(action)))
        #expect(h.timers[.retry] == nil)
        #expect(h.outstanding == nil)
        #expect(h.sent.count == 1)
        #expect(h.events.map(\.statusErrorID) == ["CFG500", nil])
        #expect(h.events.last == .setRequestorComplete(0))
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func registrationRetriesWithinTheActionBound(action: ErrorAction) {
        var h = Self.registering()
        let sends = h.respondUntilRetriesRunOut(Self.failure(action, retryAfter: .seconds(7)))
        #expect(sends == PollPolicy().actionRetries + 1)
        #expect(h.events.map(\.statusErrorID) == ["CFG500", nil])
    }

    @Test func retryAfterWaitsForRetryAfterAndRetryDoesNot() {
        var h = Self.registering()
        h.respond(.failure(Self.failure(.retryAfter, retryAfter: .seconds(20))))
        #expect(h.timers[.retry].map { h.now.duration(to: $0) >= .seconds(20) } == true)
        var plain = Self.registering()
        plain.respond(.failure(Self.failure(.retry, retryAfter: .seconds(20))))
        #expect(plain.timers[.retry].map { plain.now.duration(to: $0) < .seconds(20) } == true)
    }

    @Test func aServerErrorWithoutAnEnhancedErrorKeepsTheStageBound() {
        var h = Self.registering()
        let sends = h.respondUntilRetriesRunOut(.http(status: 500, retryAfter: nil, error: nil))
        #expect(sends == PollPolicy().stageRetries + 1)
    }

    // MARK: Token

    static func fetchingToken() -> EngineHarness {
        var h = registering()
        h.respond(.success(.registered(ClientCredentials(clientID: "client-1", clientSecret: "secret-1"))))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        return h
    }

    @Test(arguments: finalActions + [.configuration, .refresh])
    func tokenGivesUpAtOnce(action: ErrorAction) {
        var h = Self.fetchingToken()
        h.respond(.failure(Self.failure(action)))
        #expect(h.outstanding == nil)
        #expect(h.timers[.retry] == nil)
        #expect(h.events.map(\.statusErrorID) == ["CFG500", nil])
    }

    @Test func tokenAskingForApplicationRegistrationRegistersAgainOnce() {
        var h = Self.fetchingToken()
        h.respond(.failure(Self.failure(.applicationRegistration, status: 400, code: "invalid_access_token_client_application")))
        #expect(h.outstanding?.request == .registerClient(softwareStatement: EngineHarness.statement))
        h.answerHousekeeping()
        #expect(h.events.last == .setRequestorComplete(1))
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func tokenRetriesWithinTheActionBound(action: ErrorAction) {
        var h = Self.fetchingToken()
        #expect(h.respondUntilRetriesRunOut(Self.failure(action)) == PollPolicy().actionRetries + 1)
    }

    // MARK: Configuration

    static func configuring() -> EngineHarness {
        var h = fetchingToken()
        h.respond(.success(.accessToken(token: "token-1", expiresIn: .seconds(21600))))
        #expect(h.outstanding?.request == .configuration)
        return h
    }

    @Test(arguments: finalActions + [.configuration])
    func configurationGivesUpAtOnce(action: ErrorAction) {
        var h = Self.configuring()
        h.respond(.failure(Self.failure(action)))
        // `configuration` on the configuration itself is not fetched again: the same answer would come back.
        #expect(h.outstanding == nil)
        #expect(h.timers[.retry] == nil)
        #expect(h.events.map(\.statusErrorID) == ["CFG500", nil])
        #expect(h.events.last == .setRequestorComplete(0))
    }

    @Test func configurationAskingForRefreshFetchesATokenAndAsksAgain() {
        var h = Self.configuring()
        h.respond(.failure(Self.failure(.refresh, status: 401)))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.answerHousekeeping()
        #expect(h.events == [.setRequestorComplete(1)])
    }

    @Test func configurationAskingForApplicationRegistrationRegistersAgain() {
        var h = Self.configuring()
        h.respond(.failure(Self.failure(.applicationRegistration, status: 403, code: "invalid_access_token_service_provider")))
        #expect(h.outstanding?.request == .registerClient(softwareStatement: EngineHarness.statement))
        h.answerHousekeeping()
        #expect(h.events == [.setRequestorComplete(1)])
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func configurationRetriesWithinTheActionBound(action: ErrorAction) {
        var h = Self.configuring()
        #expect(h.respondUntilRetriesRunOut(Self.failure(action)) == PollPolicy().actionRetries + 1)
        #expect(h.events.map(\.statusErrorID) == ["CFG500", nil])
    }

    // MARK: Session (a new code)

    static func requestingCode() -> EngineHarness {
        var h = EngineHarness()
        h.command(.setRequestor(signingKeys: nil))
        h.answerHousekeeping()
        h.command(.getAuthentication(mvpd: "Cablevision"))
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        return h
    }

    @Test(arguments: finalActions)
    func sessionGivesUpAtOnceWithREG500(action: ErrorAction) {
        var h = Self.requestingCode()
        let mark = h.events.count
        h.respond(.failure(Self.failure(action)))
        #expect(h.outstanding == nil)
        #expect(h.timers[.retry] == nil)
        #expect(h.events(since: mark).map(\.statusErrorID) == ["REG500", nil])
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
    }

    @Test func sessionAskingForConfigurationReportsThenFetchesTheConfigurationQuietly() {
        var h = Self.requestingCode()
        let mark = h.events.count
        h.respond(.failure(Self.failure(.configuration, code: "invalid_configuration_platform")))
        #expect(h.events(since: mark).map(\.statusErrorID) == ["REG500", nil])
        #expect(h.outstanding?.request == .configuration)
        let others = [MVPD(id: "Spectrum", displayName: "Spectrum")]
        h.respond(.success(.configuration(mvpds: others)))
        // The MVPD list is replaced; `setRequestor` completed long ago and is not answered again.
        #expect(h.engine.snapshot.mvpds == others)
        #expect(h.events(since: mark).count == 2)
    }

    @Test func sessionAskingForRefreshFetchesATokenAndAsksAgain() {
        var h = Self.requestingCode()
        h.respond(.failure(Self.failure(.refresh, status: 401)))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func sessionRetriesWithinTheActionBound(action: ErrorAction) {
        var h = Self.requestingCode()
        #expect(h.respondUntilRetriesRunOut(Self.failure(action)) == PollPolicy().actionRetries + 1)
        #expect(h.events.contains { $0.statusErrorID == "REG500" })
    }

    // MARK: Poll

    static func polling() -> EngineHarness {
        var h = EngineHarness()
        h.startLogin()
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
        return h
    }

    @Test(arguments: [ErrorAction.none, .authorization, .degradation])
    func aPollServerErrorWhoseActionIsFinalEndsTheLoopAtOnce(action: ErrorAction) {
        var h = Self.polling()
        let mark = h.events.count
        h.respond(.failure(Self.failure(action)))
        #expect(!h.engine.isPolling)
        #expect(h.timers[.poll] == nil && h.timers[.codeExpiry] == nil)
        let status = h.events(since: mark).first { $0.statusErrorID == "REG500" }
        #expect(status?.args["statusDictionary"]?["details"]?.stringValue == "internal_server_error")
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.polls.last?.outcome == .serverError)
    }

    @Test func aNonEnhancedFourHundredOnAPollEndsTheLoopWithREG500() {
        // An edge's HTML 403: no enhanced error, nothing polling on can fix.
        var h = Self.polling()
        let mark = h.events.count
        h.respond(.failure(.http(status: 403, retryAfter: nil, error: nil)))
        #expect(!h.engine.isPolling)
        #expect(h.events(since: mark).map(\.statusErrorID) == ["REG500", nil])
        #expect(h.events(since: mark).first?.args["statusDictionary"]?["message"]?.stringValue == "HTTP 403")
        #expect(h.events.last == .setAuthenticationStatus(0, "Generic Authentication Error"))
        #expect(h.endedCodes.last?.code == "ABC1234")
        // Not REG410: the code did not expire, the backend refused the poll.
        #expect(!h.events.contains { $0.statusErrorID == "REG410" })
    }

    @Test func aPollServerErrorWithoutAnEnhancedErrorIsBackedOff() {
        var h = Self.polling()
        h.respond(.failure(.http(status: 503, retryAfter: nil, error: nil)))
        #expect(h.engine.isPolling)
        #expect(h.timers[.poll] != nil)
    }

    @Test(arguments: [ErrorAction.retry, .unknown("reboot")])
    func aPollServerErrorAskingForARetryIsBackedOff(action: ErrorAction) {
        var h = Self.polling()
        h.respond(.failure(Self.failure(action)))
        #expect(h.engine.isPolling)
        #expect(h.timers[.poll] != nil)
    }

    @Test func aPollAskingToRetryAfterWaitsForRetryAfter() {
        var h = Self.polling()
        h.respond(.failure(Self.failure(.retryAfter, retryAfter: .seconds(90))))
        #expect(h.engine.isPolling)
        #expect(h.timers[.poll].map { h.now.duration(to: $0) >= .seconds(90) } == true)
    }

    @Test func aPollAskingForAuthenticationGetsANewCode() {
        var h = Self.polling()
        h.respond(.failure(Self.failure(.authentication, status: 403, code: "authenticated_profile_invalidated")))
        #expect(h.outstanding?.request == .createSession(mvpd: "Cablevision"))
        h.respondWithCode("SECOND2")
        #expect(h.engine.isPolling)
        #expect(h.events.filter { $0.statusErrorID == "REGCODE" }.count == 2)
    }

    @Test func aPollAskingForConfigurationEndsTheLoopThenFetchesTheConfiguration() {
        var h = Self.polling()
        h.respond(.failure(Self.failure(.configuration, code: "invalid_configuration_platform")))
        #expect(!h.engine.isPolling)
        #expect(h.events.contains { $0.statusErrorID == "REG500" })
        #expect(h.outstanding?.request == .configuration)
    }

    @Test func aPollAskingForRefreshFetchesATokenAndPollsAgain() {
        var h = Self.polling()
        h.respond(.failure(Self.failure(.refresh, status: 401)))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
    }

    @Test func aPollAskingForApplicationRegistrationRegistersAgainAndPollsAgain() {
        var h = Self.polling()
        h.respond(.failure(Self.failure(.applicationRegistration, status: 403, code: "invalid_access_token_service_provider")))
        #expect(h.outstanding?.request == .registerClient(softwareStatement: EngineHarness.statement))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .pollProfile(code: "ABC1234", mvpd: "Cablevision"))
    }

    // MARK: Decisions

    static func authorizing() -> EngineHarness {
        var h = EngineHarness.authenticated()
        h.command(.checkAuthorization(resource: "Live"))
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
        return h
    }

    @Test(arguments: [
        (ErrorAction.none, "Z120"), (.authorization, "Z100"), (.degradation, "Z169"), (.configuration, "Z500"), (.authentication, "Z120"),
    ])
    func aPersistentServerErrorOnAuthorizationReachesTheAppAtOnce(action: ErrorAction, status: String) {
        var h = Self.authorizing()
        let mark = h.events.count
        let sentAt = h.now
        h.respond(.failure(Self.failure(action)))
        #expect(h.timers[.retry] == nil)
        #expect(h.events(since: mark).map(\.statusErrorID) == [status, nil, nil])
        #expect(
            h.events(since: mark)[1]
                == .tokenRequestFailed("Live", errorCode: "Generic Authorization Error", errorDescription: "HTTP 500 internal_server_error")
        )
        #expect(sentAt.duration(to: h.now) == .milliseconds(20), "no time passes beyond the answer's latency")
        // Action `configuration` fetches the configuration again, after the app was answered.
        #expect(h.outstanding?.request == (action == .configuration ? .configuration : nil))
    }

    @Test func authorizationAskingForAuthenticationDropsTheProfile() {
        var h = Self.authorizing()
        let mark = h.events.count
        h.respond(.failure(Self.failure(.authentication, status: 403, code: "identity_not_recognized_by_mvpd")))
        #expect(!h.engine.isAuthenticated)
        #expect(
            h.events(since: mark).prefix(2) == [
                .setAuthenticationStatus(0, "User Not Authenticated Error"),
                .tokenRequestFailed("Live", errorCode: "User Not Authenticated Error", errorDescription: "identity_not_recognized_by_mvpd"),
            ]
        )
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func authorizationRetriesWithinTheActionBoundThenZ120(action: ErrorAction) {
        var h = Self.authorizing()
        let mark = h.events.count
        #expect(h.respondUntilRetriesRunOut(Self.failure(action, status: 403, code: "network_connection_timeout")) == PollPolicy().actionRetries + 1)
        #expect(h.events(since: mark).first?.statusErrorID == "Z120")
    }

    @Test func authorizationAskingForRefreshFetchesATokenAndAsksAgain() {
        var h = Self.authorizing()
        h.respond(.failure(Self.failure(.refresh, status: 401)))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
    }

    @Test func authorizationAskingForApplicationRegistrationRegistersAgainAndAsksAgain() {
        var h = Self.authorizing()
        h.respond(.failure(Self.failure(.applicationRegistration, status: 403, code: "invalid_access_token_service_provider")))
        #expect(h.outstanding?.request == .registerClient(softwareStatement: EngineHarness.statement))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .authorize(mvpd: "Cablevision", resource: "Live"))
    }

    @Test(arguments: finalActions + [.configuration])
    func preauthorizationGivesUpAtOnceWithP100(action: ErrorAction) {
        var h = EngineHarness.authenticated()
        h.command(.checkPreauthorizedResources(["Live", "News"]))
        let mark = h.events.count
        h.respond(.failure(Self.failure(action)))
        #expect(h.timers[.retry] == nil)
        if action == .authentication {
            // A 500 is not a lost authentication: only the answer is refused.
            #expect(h.engine.isAuthenticated)
        }
        #expect(h.events(since: mark).map(\.statusErrorID) == ["P100", nil])
        #expect(h.events.last == .preauthorizedResources([]))
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func preauthorizationRetriesWithinTheActionBound(action: ErrorAction) {
        var h = EngineHarness.authenticated()
        h.command(.checkPreauthorizedResources(["Live"]))
        #expect(h.respondUntilRetriesRunOut(Self.failure(action)) == PollPolicy().actionRetries + 1)
        #expect(h.events.last == .preauthorizedResources([]))
    }

    // MARK: Logout

    @Test(arguments: finalActions + [.configuration])
    func logoutGivesUpAtOnce(action: ErrorAction) {
        var h = EngineHarness.authenticated()
        h.command(.logout)
        #expect(h.outstanding?.request == .logout(mvpd: "Cablevision"))
        let mark = h.events.count
        h.respond(.failure(Self.failure(action)))
        #expect(h.timers[.retry] == nil)
        #expect(h.events(since: mark) == [.setAuthenticationStatus(0, "User Not Authenticated Error")])
    }

    @Test(arguments: [ErrorAction.retry, .retryAfter])
    func logoutRetriesWithinTheActionBound(action: ErrorAction) {
        var h = EngineHarness.authenticated()
        h.command(.logout)
        #expect(h.respondUntilRetriesRunOut(Self.failure(action)) == PollPolicy().actionRetries + 1)
        #expect(h.events.last == .setAuthenticationStatus(0, "User Not Authenticated Error"))
    }

    @Test func logoutAskingForRefreshFetchesATokenAndLogsOutAgain() {
        var h = EngineHarness.authenticated()
        h.command(.logout)
        h.respond(.failure(Self.failure(.refresh, status: 401)))
        #expect(h.outstanding?.request == .obtainAccessToken(ClientCredentials(clientID: "client-1", clientSecret: "secret-1")))
        h.answerHousekeeping()
        #expect(h.outstanding?.request == .logout(mvpd: "Cablevision"))
    }

    // MARK: The queue behind a failing call

    @Test func aCallQueuedBehindAFinalFailureIsSentAtOnce() {
        var h = Self.authorizing()
        h.command(.checkPreauthorizedResources(["News"]))
        #expect(h.engine.pendingWork == 1)
        let failedAt = h.now
        h.respond(.failure(Self.failure(ErrorAction.none)))
        // The authorization is answered and the preauthorization goes out in the same step.
        #expect(h.events.contains { $0.statusErrorID == "Z120" })
        #expect(h.outstanding?.request == .preauthorize(mvpd: "Cablevision", resources: ["News"]))
        #expect(h.sent.last.map { failedAt.duration(to: $0.at) } == .milliseconds(20))
    }

    @Test func aCallQueuedBehindATransientFailureWaitsForItsRetries() {
        // The contrast: a 500 without an enhanced error is retried, and the single request slot is held.
        var h = Self.authorizing()
        h.command(.checkPreauthorizedResources(["News"]))
        h.respond(.failure(.http(status: 500, retryAfter: nil, error: nil)))
        #expect(h.timers[.retry] != nil)
        #expect(h.outstanding == nil)
        #expect(h.engine.pendingWork == 1)
    }
}
