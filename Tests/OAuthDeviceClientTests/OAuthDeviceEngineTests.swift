import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeRecords
import Testing

/// An OAuth device as the fleet drives it: the engine's commands, answers and timers in, the engine's actions out.
@Suite("OAuthDeviceEngine")
struct OAuthDeviceEngineTests {
    /// Drives one engine on a test clock: every send is answered from `answers` in order, every timer fires when due.
    struct Driver {
        let clock = TestClock()
        var engine: OAuthDeviceEngine
        var actions: [DeviceAction] = []
        var timers: [DeviceTimer: DeviceInstant] = [:]
        var pending: [(id: RequestID, request: WireRequest)] = []

        init(_ configure: (inout OAuthDeviceConfiguration) -> Void = { _ in }, snapshot: DeviceSnapshot = DeviceSnapshot()) {
            var settings = DeviceSettings(name: "tv-1", requestor: "REF30")
            var oauth = OAuthDeviceConfiguration()
            oauth.issuer = "http://127.0.0.1:9000"
            oauth.discovery = "off"
            configure(&oauth)
            settings.oauth = oauth
            settings.polling.jitter = 0
            engine = OAuthDeviceEngine(settings: settings, deviceID: "dev-1", snapshot: snapshot, clock: clock, seed: 1)
        }

        mutating func take(_ new: [DeviceAction]) {
            actions += new
            for action in new {
                switch action {
                case .send(let id, .wire(let request), _): pending.append((id, request))
                case .schedule(let timer, let instant): timers[timer] = instant
                case .cancel(let timer): timers[timer] = nil
                default: break
                }
            }
        }

        mutating func command(_ command: DeviceCommand) { take(engine.handle(command)) }

        /// Answers the request on the wire after `latency`.
        mutating func answer(_ status: Int, _ object: [String: Any], latency: Duration = .milliseconds(20)) throws {
            let (id, _) = try #require(pending.first)
            pending.removeFirst()
            let sentAt = clock.now
            clock.advance(by: latency)
            let body = try JSONSerialization.data(withJSONObject: object)
            let response = WireResponse(status: status, body: Array(body))
            take(engine.handle(response: .success(.wire(response)), for: id, timing: RequestTiming(sentAt: sentAt, latency: latency)))
        }

        /// Moves the clock to the earliest timer and fires it.
        mutating func fireNextTimer() throws {
            let (timer, instant) = try #require(timers.min { $0.value < $1.value })
            clock.advance(to: instant)
            timers[timer] = nil
            take(engine.timerFired(timer))
        }

        var polls: [PollAttempt] { actions.compactMap { if case .recordPoll(let poll) = $0 { poll } else { nil } } }
        var requests: [RequestAttempt] { actions.compactMap { if case .recordRequest(let request) = $0 { request } else { nil } } }
        var events: [DeviceEvent] { actions.compactMap { if case .emit(let event) = $0 { event } else { nil } } }
        var snapshots: [DeviceSnapshot] { actions.compactMap { if case .persist(let snapshot) = $0 { snapshot } else { nil } } }
        var endings: [CodeEnding] { actions.compactMap { if case .endCode(let ending) = $0 { ending } else { nil } } }
        var sentRecords: [RequestInFlight] { actions.compactMap { if case .recordSent(let record) = $0 { record } else { nil } } }
    }

    @Test("a login: the code shown, polls in the poll log, the grant stored as a profile, the code ended authenticated")
    func login() throws {
        var driver = Driver()
        driver.command(.getAuthentication(mvpd: nil))
        let first = try #require(driver.pending.first?.request)
        #expect(first.url == "http://127.0.0.1:9000/device_authorization")
        #expect(first.method == .post)
        #expect(String(decoding: first.body, as: UTF8.self).contains("client_id=regcoded-tv"))
        try driver.answer(200, deviceAuthorization(interval: 5))
        #expect(driver.events.contains { $0.shownCode?.code == "WDJB-MJHT" })
        #expect(driver.snapshots.last?.code?.code == "WDJB-MJHT")
        #expect(driver.snapshots.last?.phase == .polling)
        #expect(driver.requests.map(\.stage) == [.session])
        #expect(driver.requests.map(\.outcome) == [.ok])

        try driver.fireNextTimer()
        try driver.answer(400, ["error": "authorization_pending"])
        try driver.fireNextTimer()
        try driver.answer(200, tokens())

        let polls = driver.polls
        #expect(polls.map(\.outcome) == [.pending, .authenticated])
        #expect(polls.allSatisfy { $0.code == "WDJB-MJHT" && $0.sentEpochMs >= $0.plannedEpochMs })
        #expect(polls.first?.nextDelayMs == 5_000)
        #expect(polls.last?.nextDelayMs == nil)
        // Every call was recorded before it went out, polls with their code and planned time.
        #expect(driver.sentRecords.map(\.stage) == [.session, .poll, .poll])
        #expect(driver.sentRecords.last?.pollCode == "WDJB-MJHT")
        #expect(driver.endings == [CodeEnding(code: "WDJB-MJHT", outcome: .authenticated)])
        let stored = try #require(driver.snapshots.last)
        #expect(stored.code == nil)
        #expect(stored.profile?.mvpd == "generic")
        #expect(stored.oauth?.tokens?.accessToken == "A1")
        #expect(driver.engine.phase == .authenticated)
        #expect(driver.events.last?.loginSignal == .signedIn)
    }

    @Test("a too-fast device's polls are planned when the protocol allows them, so they show as early")
    func tooFastPollsAreEarly() throws {
        var driver = Driver { $0.misbehave = .tooFast }
        driver.command(.getAuthentication(mvpd: nil))
        try driver.answer(200, deviceAuthorization(interval: 4))
        for _ in 0..<3 {
            try driver.fireNextTimer()
            try driver.answer(400, ["error": "authorization_pending"])
        }
        let polls = driver.polls
        #expect(polls.count == 3)
        // The first poll comes half an interval after the code: 2 s before the 4 s RFC 8628 asks.
        #expect(polls.allSatisfy { $0.plannedEpochMs - $0.sentEpochMs >= 1_900 }, "\(polls.map { ($0.plannedEpochMs, $0.sentEpochMs) })")
    }

    @Test("a well-behaved device takes slow_down: its polls are never early, the interval grows by 5 s")
    func slowDownIsTaken() throws {
        var driver = Driver()
        driver.command(.getAuthentication(mvpd: nil))
        try driver.answer(200, deviceAuthorization(interval: 2))
        try driver.fireNextTimer()
        try driver.answer(400, ["error": "slow_down"])
        try driver.fireNextTimer()
        try driver.answer(400, ["error": "authorization_pending"])
        let polls = driver.polls
        #expect(polls.map(\.outcome) == [.slowDown, .pending])
        #expect(polls.first?.nextDelayMs == 7_000)
        #expect(polls.allSatisfy { $0.sentEpochMs >= $0.plannedEpochMs })
        #expect(driver.events.contains(.oauth(.slowedDown(requested: .seconds(7), inForce: .seconds(7)))))
    }

    @Test("a refusal ends the code as failed and the login as failed")
    func denial() throws {
        var driver = Driver()
        driver.command(.getAuthentication(mvpd: nil))
        try driver.answer(200, deviceAuthorization())
        try driver.fireNextTimer()
        try driver.answer(400, ["error": "access_denied"])
        #expect(driver.polls.map(\.outcome) == [.denied])
        #expect(driver.endings == [CodeEnding(code: "WDJB-MJHT", outcome: .failed(reason: "access_denied"))])
        #expect(driver.events.last?.loginSignal == .loginFailed)
        #expect(driver.engine.phase == .failed)
    }

    @Test("logout revokes the tokens: the request log has each revocation under logout")
    func logoutRevokes() throws {
        var driver = Driver()
        driver.command(.getAuthentication(mvpd: nil))
        try driver.answer(200, deviceAuthorization())
        try driver.fireNextTimer()
        try driver.answer(200, tokens())
        driver.command(.logout)
        try driver.answer(200, [:])
        try driver.answer(200, [:])
        let revocations = driver.requests.filter { $0.stage == .logout }
        #expect(revocations.map(\.endpoint) == ["oauth.revocation.refresh_token", "oauth.revocation.access_token"])
        #expect(driver.events.last?.loginSignal == .signedOut)
        #expect(driver.snapshots.last?.profile == nil)
        #expect(driver.snapshots.last?.oauth?.tokens == nil)
    }

    @Test("a stored grant is resumed: no new code, the device is authenticated at once")
    func resumesTheStoredGrant() throws {
        var first = Driver()
        first.command(.getAuthentication(mvpd: nil))
        try first.answer(200, deviceAuthorization())
        try first.fireNextTimer()
        try first.answer(200, tokens())
        let stored = try #require(first.snapshots.last)

        var again = Driver(snapshot: stored)
        again.take(again.engine.resume())
        again.command(.getAuthentication(mvpd: nil))
        #expect(again.pending.isEmpty)
        #expect(again.engine.phase == .authenticated)
        #expect(again.engine.snapshot.profile == stored.profile)
    }

    @Test("a token shorter-lived than the refresh margin is refreshed at half-life, not in a loop; rotation is kept")
    func shortLivedTokensRefreshAtHalfLife() throws {
        var driver = Driver()
        driver.command(.getAuthentication(mvpd: nil))
        try driver.answer(200, deviceAuthorization())
        try driver.fireNextTimer()
        try driver.answer(200, tokens(expiresIn: 4))
        let refreshAt = try #require(driver.timers[.refresh])
        #expect(driver.clock.now.duration(to: refreshAt) == .seconds(2))
        try driver.fireNextTimer()
        let refresh = try #require(driver.pending.first?.request)
        #expect(String(decoding: refresh.body, as: UTF8.self).contains("grant_type=refresh_token"))
        try driver.answer(200, tokens(access: "A2", refresh: "R2", expiresIn: 4))
        #expect(driver.events.contains(.oauth(.tokenRefreshed(expiresIn: .seconds(4), rotated: true))))
        #expect(driver.pending.isEmpty, "no second refresh at once")
        let next = try #require(driver.timers[.refresh])
        #expect(driver.clock.now.duration(to: next) == .seconds(2))
        #expect(driver.snapshots.last?.oauth?.tokens?.refreshToken == "R2")
        #expect(driver.requests.last?.stage == .token)
        #expect(driver.requests.last?.endpoint == "oauth.refresh")
    }

    @Test("Adobe Pass calls mean nothing to an OAuth device")
    func otherCallsAreIgnored() {
        var driver = Driver()
        driver.command(.setRequestor(signingKeys: nil))
        driver.command(.checkAuthentication)
        driver.command(.checkAuthorization(resource: "REF30"))
        #expect(driver.actions.isEmpty)
    }
}
