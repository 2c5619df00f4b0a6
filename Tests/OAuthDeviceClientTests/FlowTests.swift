import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import Testing

@Suite("OAuth device flow (RFC 8628)")
struct FlowTests {
    @Test("discovery, code, pending polls at the interval, tokens")
    func wholeFlow() throws {
        var harness = Harness(settings: settings(.generic, discovery: .provider)) { request, harness in
            switch request.purpose {
            case .discovery:
                return json(
                    200,
                    [
                        "issuer": "http://127.0.0.1:9000",
                        "device_authorization_endpoint": "http://127.0.0.1:9000/oauth/device",
                        "token_endpoint": "http://127.0.0.1:9000/oauth/token",
                        "revocation_endpoint": "http://127.0.0.1:9000/oauth/revoke",
                    ]
                )
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return harness.pollRequests.count > 3 ? json(200, tokens()) : json(400, ["error": "authorization_pending"])
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }

        #expect(harness.requests.map(\.purpose) == [.discovery, .deviceAuthorization, .poll, .poll, .poll, .poll])
        #expect(harness.requests[0].url == "http://127.0.0.1:9000/.well-known/oauth-authorization-server")
        #expect(harness.requests[0].method == .get)
        #expect(harness.requests[1].url == "http://127.0.0.1:9000/oauth/device")
        #expect(harness.requests[1].formValue("client_id") == "tv-app")
        #expect(harness.requests[1].formValue("scope") == "openid offline_access")
        let poll = try #require(harness.pollRequests.first)
        #expect(poll.url == "http://127.0.0.1:9000/oauth/token")
        #expect(poll.formValue("grant_type") == "urn:ietf:params:oauth:grant-type:device_code")
        #expect(poll.formValue("device_code") == "DEV-1")
        #expect(poll.header("Content-Type") == "application/x-www-form-urlencoded")

        #expect(harness.events.first == .discovered(issuer: "http://127.0.0.1:9000"))
        let shown = try #require(
            harness.events.compactMap { if case .codeShown(let code) = $0 { return code } else { return nil } }.first
        )
        #expect(shown.userCode == "WDJB-MJHT")
        #expect(shown.verificationURIComplete == "http://127.0.0.1:9000/device?user_code=WDJB-MJHT")
        #expect(shown.interval == .seconds(5))
        #expect(shown.expiresIn == .seconds(600))
        #expect(harness.events.pollOutcomes == [.authorizationPending, .authorizationPending, .authorizationPending, .authorized])
        #expect(harness.events.last == .authorized(scope: "openid", expiresIn: .seconds(3600), refreshable: true))
        #expect(harness.pollGaps.allSatisfy { $0 >= .seconds(5) })
        #expect(harness.polls.allSatisfy { !$0.early && $0.interval == .seconds(5) })
        #expect(harness.concurrentSends == 0)
        let stored = try #require(harness.persisted.last)
        #expect(stored.tokens?.accessToken == "A1")
        #expect(stored.tokens?.refreshToken == "R1")
        #expect(stored.code == nil)
        #expect(stored.discovered?[.token] == "http://127.0.0.1:9000/oauth/token")
    }

    @Test("an absent interval means 5 s")
    func defaultInterval() {
        var harness = Harness(
            settings: settings(.generic),
            server: grantingServer(pendingPolls: 2, authorization: deviceAuthorization(interval: nil))
        )
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        #expect(harness.pollGaps.count == 2)
        #expect(harness.pollGaps.allSatisfy { $0 >= .seconds(5) && $0 < .seconds(6) })
    }

    @Test("slow_down adds 5 s to this and every later poll: no early poll after it")
    func slowDown() {
        var harness = Harness(settings: settings(.generic)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll:
                let count = harness.pollRequests.count
                if count == 2 || count == 4 { return json(400, ["error": "slow_down"]) }
                return count > 8 ? json(200, tokens()) : json(400, ["error": "authorization_pending"])
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }

        #expect(harness.events.filter { if case .slowedDown = $0 { true } else { false } }.count == 2)
        #expect(harness.events.contains(.slowedDown(requested: .seconds(10), inForce: .seconds(10))))
        #expect(harness.events.contains(.slowedDown(requested: .seconds(15), inForce: .seconds(15))))
        let gaps = harness.pollGaps
        // Polls 1-2 at 5 s; after the first slow_down (poll 2) at 10 s; after the second (poll 4) at 15 s.
        #expect(gaps[0] >= .seconds(5))
        #expect(gaps[1] >= .seconds(10) && gaps[2] >= .seconds(10))
        #expect(gaps[3...].allSatisfy { $0 >= .seconds(15) })
        #expect(harness.polls.filter(\.early).count == 0)
        #expect(harness.polls.last?.interval == .seconds(15))
    }

    @Test("ignore-slow-down keeps the old interval; its polls are counted early")
    func ignoreSlowDown() {
        var configuration = settings(.generic)
        configuration.misbehaviour = .ignoreSlowDown
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll:
                let count = harness.pollRequests.count
                if count == 2 { return json(400, ["error": "slow_down"]) }
                return count > 5 ? json(200, tokens()) : json(400, ["error": "authorization_pending"])
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        #expect(harness.events.contains(.slowedDown(requested: .seconds(10), inForce: .seconds(5))))
        #expect(harness.pollGaps.allSatisfy { $0 < .seconds(6) })
        // Polls 3 to 6 come 5 s apart while 10 s are in force.
        #expect(harness.polls.filter(\.early).count == 4)
    }

    @Test("too-fast polls at half the interval")
    func tooFast() {
        var configuration = settings(.generic)
        configuration.misbehaviour = .tooFast
        var harness = Harness(settings: configuration, server: grantingServer(pendingPolls: 4))
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        #expect(harness.pollGaps.allSatisfy { $0 >= .milliseconds(2500) && $0 < .seconds(3) })
        #expect(harness.polls.dropFirst().allSatisfy { $0.early })
    }

    @Test("never polls at or past expires_in; the code ends as expired")
    func expiry() {
        // Without jitter the polls land at 7.1, 14.2, 21.3 and 28.4 s; the fifth would be at 35.5 s, past 30.1 s.
        var configuration = settings(.generic)
        configuration.retry.jitter = 0
        var harness = Harness(
            settings: configuration,
            server: grantingServer(pendingPolls: 1000, authorization: deviceAuthorization(interval: 7, expiresIn: 30))
        )
        harness.command(.login)
        harness.run()
        let shownAt = DeviceInstant(offset: .milliseconds(100))
        let expiry = shownAt.advanced(by: .seconds(30))
        #expect(!harness.polls.isEmpty)
        #expect(harness.polls.allSatisfy { $0.sentAt < expiry })
        #expect(harness.pollRequests.count == 4)
        #expect(harness.events.last == .expired)
        #expect(harness.machine.state == .expired)
        #expect(harness.persisted.last?.code == nil)
        #expect(harness.timers.isEmpty)
    }

    @Test("expired_token ends the login")
    func expiredToken() {
        var harness = Harness(settings: settings(.generic), server: grantingServer(pendingPolls: 1000) { json(400, ["error": "expired_token"]) })
        harness.command(.login)
        harness.run()
        #expect(harness.pollRequests.count == 1)
        #expect(harness.events.last == .expired)
    }

    @Test("access_denied ends the login")
    func accessDenied() {
        var harness = Harness(settings: settings(.generic)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            default: return harness.pollRequests.count > 2 ? json(400, ["error": "access_denied"]) : json(400, ["error": "authorization_pending"])
            }
        }
        harness.command(.login)
        harness.run()
        #expect(harness.pollRequests.count == 3)
        #expect(harness.events.pollOutcomes.last == .denied(.accessDenied))
        #expect(harness.events.last == .denied(.accessDenied))
        #expect(harness.machine.state == .denied(.accessDenied))
        #expect(harness.timers.isEmpty)
    }

    @Test("transport errors and 5xx back off, bounded, never under the interval; the limit ends the login")
    func transportBackoff() {
        var configuration = settings(.generic)
        configuration.retry.backoffCap = .seconds(40)
        configuration.retry.maxConsecutiveErrors = 8
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization(expiresIn: 1800))
            default:
                return harness.pollRequests.count % 2 == 0 ? .failure(OAuthTransportFailure("connection refused")) : json(503, [:])
            }
        }
        harness.command(.login)
        harness.run()
        #expect(harness.pollRequests.count == 8)
        #expect(harness.pollGaps.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(40) + .milliseconds(100) })
        #expect(harness.pollGaps.contains { $0 > .seconds(10) })
        #expect(harness.events.pollOutcomes.contains(.serverError(status: 503)))
        #expect(harness.events.pollOutcomes.contains(.transportFailure("connection refused")))
        guard case .failed(let failure) = harness.machine.state else {
            Issue.record("expected failed, got \(harness.machine.state)")
            return
        }
        #expect(failure.stage == .poll)
        #expect(failure.reason == .retriesExhausted(attempts: 8, last: "connection refused"))
    }

    @Test("a failing device authorization is retried with the stage back-off, then fails")
    func deviceAuthorizationRetries() {
        var configuration = settings(.generic)
        configuration.retry.stageRetries = 2
        var harness = Harness(settings: configuration) { _, _ in json(502, [:]) }
        harness.command(.login)
        harness.run()
        #expect(harness.requests.map(\.purpose) == [.deviceAuthorization, .deviceAuthorization, .deviceAuthorization])
        #expect(harness.events.last == .failed(OAuthFailure(stage: .deviceAuthorization, reason: .retriesExhausted(attempts: 3, last: "HTTP 502"))))
    }

    @Test("refresh before expiry, keeping a rotated refresh token")
    func refreshWithRotation() throws {
        var configuration = settings(.generic)
        configuration.refreshMargin = .seconds(60)
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens(access: "A1", refresh: "R1", expiresIn: 300))
            case .refresh:
                let count = harness.requests.filter { $0.purpose == .refresh }.count
                // The first refresh rotates, the second does not.
                return json(
                    200,
                    count == 1 ? tokens(access: "A2", refresh: "R2", expiresIn: 300) : tokens(access: "A3", refresh: nil, expiresIn: 300)
                )
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { harness in harness.events.filter { if case .tokenRefreshed = $0 { true } else { false } }.count == 2 }
        let refreshRequests = harness.requests.filter { $0.purpose == .refresh }
        #expect(refreshRequests.map { $0.formValue("refresh_token") } == ["R1", "R2"])
        #expect(refreshRequests.allSatisfy { $0.formValue("grant_type") == "refresh_token" })
        let grantedAt = try #require(harness.polls.first?.answeredAt)
        // Each refresh comes 60 s before the 300 s lifetime ends: the second at 2 × 240 s after the grant.
        #expect(harness.events.contains(.tokenRefreshed(expiresIn: .seconds(300), rotated: true)))
        #expect(harness.events.contains(.tokenRefreshed(expiresIn: .seconds(300), rotated: false)))
        let stored = try #require(harness.persisted.last?.tokens)
        #expect(stored.accessToken == "A3")
        #expect(stored.refreshToken == "R2")
        #expect(harness.clock.now >= grantedAt.advanced(by: .seconds(480)))
        #expect(harness.clock.now < grantedAt.advanced(by: .seconds(481)))
    }

    @Test("a refused refresh token ends the grant")
    func refreshRefused() {
        var harness = Harness(settings: settings(.generic)) { request, _ in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens(expiresIn: 120))
            default: return json(400, ["error": "invalid_grant"])
            }
        }
        harness.command(.login)
        harness.run()
        #expect(harness.events.last == .failed(OAuthFailure(stage: .refresh, reason: .tokenError(.invalidGrant, description: nil))))
        #expect(harness.persisted.last?.tokens == nil)
    }

    @Test("logout revokes the refresh token, then the access token (RFC 7009)")
    func revokeOnLogout() {
        var harness = Harness(settings: settings(.generic)) { request, _ in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens())
            case .revocation: return .success(OAuthHTTPResponse(status: 200))
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        harness.command(.logout)
        harness.run()
        let revocations = harness.requests.filter { if case .revocation = $0.purpose { true } else { false } }
        #expect(revocations.map { $0.formValue("token") } == ["R1", "A1"])
        #expect(revocations.map { $0.formValue("token_type_hint") } == ["refresh_token", "access_token"])
        #expect(revocations.allSatisfy { $0.url == "http://127.0.0.1:9000/revoke" && $0.formValue("client_id") == "tv-app" })
        #expect(Array(harness.events.suffix(3)) == [.revoked(.refreshToken, status: 200), .revoked(.accessToken, status: 200), .loggedOut])
        #expect(harness.machine.state == .idle)
        #expect(harness.persisted.last?.tokens == nil)
        #expect(harness.timers.isEmpty)
    }

    @Test("a revocation answered 503 is retried")
    func revocationRetried() {
        var harness = Harness(settings: settings(.auth0)) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens())
            default:
                return harness.requests.filter { $0.purpose == .revocation(.refreshToken) }.count == 1
                    ? json(503, [:]) : .success(OAuthHTTPResponse(status: 200))
            }
        }
        harness.command(.login)
        harness.run { $0.machine.isAuthorized }
        harness.command(.logout)
        harness.run()
        // Auth0 revokes refresh tokens only.
        #expect(harness.requests.filter { if case .revocation = $0.purpose { true } else { false } }.count == 2)
        #expect(Array(harness.events.suffix(2)) == [.revoked(.refreshToken, status: 200), .loggedOut])
    }

    @Test("a logout while a poll is out waits for its answer: one request in flight")
    func oneRequestInFlight() {
        var harness = Harness(settings: settings(.generic), server: grantingServer(pendingPolls: 1000))
        harness.command(.login)
        harness.run { $0.pollRequests.count == 2 && !$0.outstanding.isEmpty }
        harness.command(.logout)
        harness.run()
        #expect(harness.concurrentSends == 0)
        #expect(harness.events.last == .cancelled)
        #expect(harness.polls.last?.outcome == .abandoned)
        #expect(harness.machine.state == .idle)
    }

    @Test("the token is exercised at userinfo; a 401 leads to a refresh")
    func exercise() {
        var configuration = settings(.generic)
        configuration.exercise = OAuthTokenExercise(endpoint: .userinfo, every: .seconds(30))
        var harness = Harness(settings: configuration) { request, harness in
            switch request.purpose {
            case .deviceAuthorization: return json(200, deviceAuthorization())
            case .poll: return json(200, tokens())
            case .exercise:
                let count = harness.requests.filter { $0.purpose == .exercise(.userinfo) }.count
                return count == 3 ? json(401, ["error": "invalid_token"]) : json(200, ["sub": "u1"])
            case .refresh: return json(200, tokens(access: "A2", refresh: "R2"))
            default: return json(404, [:])
            }
        }
        harness.command(.login)
        harness.run { harness in harness.events.contains { if case .tokenRefreshed = $0 { true } else { false } } }
        let exercises = harness.requests.filter { $0.purpose == .exercise(.userinfo) }
        #expect(exercises.count == 3)
        #expect(exercises.allSatisfy { $0.method == .get && $0.header("Authorization") == "Bearer A1" && $0.url == "http://127.0.0.1:9000/userinfo" })
        #expect(harness.events.contains(.tokenExercised(.userinfo, status: 401, active: nil)))
        #expect(harness.events.last == .tokenRefreshed(expiresIn: .seconds(3600), rotated: true))
    }

    @Test("resume: a pending code is polled again, tokens are kept, another client's snapshot is ignored")
    func resume() {
        let clock = TestClock()
        var stored = OAuthDeviceSnapshot(clientID: "tv-app")
        stored.code = OAuthDeviceSnapshot.PendingCode(
            deviceCode: "DEV-9",
            userCode: "ABCD-EFGH",
            verificationURI: "http://127.0.0.1:9000/device",
            verificationURIComplete: nil,
            message: nil,
            expiresEpochMs: clock.originEpochMs + 60_000,
            intervalMs: 10_000,
            ownIntervalMs: 10_000
        )
        var harness = Harness(settings: settings(.generic), snapshot: stored, clock: clock, server: grantingServer(pendingPolls: 1))
        harness.resume()
        harness.run { $0.machine.isAuthorized }
        #expect(harness.pollRequests.map { $0.formValue("device_code") } == ["DEV-9", "DEV-9"])
        #expect(harness.polls.first.map { $0.sentAt >= DeviceInstant(offset: .seconds(10)) } == true)
        #expect(harness.pollGaps.allSatisfy { $0 >= .seconds(10) })

        var withTokens = OAuthDeviceSnapshot(clientID: "tv-app")
        withTokens.tokens = OAuthDeviceSnapshot.Tokens(
            accessToken: "A9",
            tokenType: "Bearer",
            refreshToken: "R9",
            idToken: nil,
            scope: nil,
            accessExpiresEpochMs: clock.originEpochMs + 3_600_000
        )
        var held = Harness(settings: settings(.generic), snapshot: withTokens, clock: TestClock(), server: grantingServer(pendingPolls: 0))
        held.resume()
        #expect(held.machine.isAuthorized)
        #expect(held.timers[.refresh] != nil)

        var other = Harness(
            settings: settings(.generic),
            snapshot: OAuthDeviceSnapshot(clientID: "other-app"),
            server: grantingServer(pendingPolls: 0)
        )
        other.resume()
        #expect(other.machine.state == .idle)
        #expect(other.requests.isEmpty)
    }

    @Test("a missing placeholder is a configuration failure, not a request")
    func missingPlaceholder() {
        var configuration = settings(.keycloak)
        configuration.placeholders = OAuthPathPlaceholders()
        var harness = Harness(settings: configuration, server: grantingServer(pendingPolls: 0))
        harness.command(.login)
        #expect(harness.requests.isEmpty)
        guard case .failed(let failure) = harness.machine.state else {
            Issue.record("expected failed, got \(harness.machine.state)")
            return
        }
        #expect(failure.stage == .deviceAuthorization)
    }
}
