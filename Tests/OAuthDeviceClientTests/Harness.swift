import Foundation
import OAuthDeviceClient
import OAuthDeviceGrant
import RegcodeEngine
import Synchronization

/// A clock that moves only when told.
final class TestClock: DeviceClock {
    private let instant = Mutex(DeviceInstant(offset: .zero))
    /// Wall-clock time at the origin.
    let originEpochMs: Int64 = 1_750_000_000_000

    var now: DeviceInstant { instant.withLock { $0 } }

    func advance(to deadline: DeviceInstant) {
        instant.withLock { $0 = max($0, deadline) }
    }

    func advance(by duration: Duration) {
        instant.withLock { $0 = $0.advanced(by: duration) }
    }

    func epochMilliseconds(at instant: DeviceInstant) -> Int64 {
        originEpochMs + instant.offset.components.seconds * 1000 + instant.offset.components.attoseconds / 1_000_000_000_000_000
    }

    func sleep(until deadline: DeviceInstant) async throws {
        advance(to: deadline)
    }
}

typealias Answer = Result<OAuthHTTPResponse, OAuthTransportFailure>

/// A JSON answer.
func json(_ status: Int, _ object: [String: Any], headers: [OAuthHeader] = []) -> Answer {
    let body = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return .success(OAuthHTTPResponse(status: status, headers: [OAuthHeader("Content-Type", "application/json")] + headers, body: body))
}

func tokens(access: String = "A1", refresh: String? = "R1", expiresIn: Int = 3600, scope: String? = "openid") -> [String: Any] {
    var object: [String: Any] = ["access_token": access, "token_type": "Bearer", "expires_in": expiresIn]
    if let refresh { object["refresh_token"] = refresh }
    if let scope { object["scope"] = scope }
    return object
}

func deviceAuthorization(
    interval: Int? = 5,
    expiresIn: Int = 600,
    verificationField: String = "verification_uri",
    extra: [String: Any] = [:]
) -> [String: Any] {
    var object: [String: Any] = [
        "device_code": "DEV-1",
        "user_code": "WDJB-MJHT",
        verificationField: "http://127.0.0.1:9000/device",
        "verification_uri_complete": "http://127.0.0.1:9000/device?user_code=WDJB-MJHT",
        "expires_in": expiresIn,
    ]
    if let interval { object["interval"] = interval }
    return object.merging(extra) { _, new in new }
}

/// Drives one machine against a scripted server on a manual clock: answers come `latency` after the request, timers
/// fire in order. Loops are bounded by `maxSteps`.
struct Harness {
    var machine: OAuthDeviceMachine
    let clock: TestClock
    var server: (OAuthRequest, Harness) -> Answer
    var latency: Duration = .milliseconds(100)

    var timers: [OAuthDeviceTimer: DeviceInstant] = [:]
    var outstanding: [OAuthRequest] = []
    var requests: [OAuthRequest] = []
    var events: [OAuthDeviceEvent] = []
    var polls: [OAuthPollRecord] = []
    var persisted: [OAuthDeviceSnapshot] = []
    /// Sends made while another request was still out.
    var concurrentSends = 0

    init(
        settings: OAuthDeviceSettings,
        snapshot: OAuthDeviceSnapshot? = nil,
        clock: TestClock = TestClock(),
        server: @escaping (OAuthRequest, Harness) -> Answer
    ) {
        self.clock = clock
        self.machine = OAuthDeviceMachine(settings: settings, clock: clock, seed: 42, snapshot: snapshot)
        self.server = server
    }

    var pollRequests: [OAuthRequest] { requests.filter { $0.purpose == .poll } }

    mutating func apply(_ actions: [OAuthDeviceAction]) {
        for action in actions {
            switch action {
            case .send(let request):
                if !outstanding.isEmpty { concurrentSends += 1 }
                outstanding.append(request)
                requests.append(request)
            case .schedule(let timer, let at): timers[timer] = at
            case .cancel(let timer): timers[timer] = nil
            case .persist(let snapshot): persisted.append(snapshot)
            case .emit(let event): events.append(event)
            case .recordPoll(let record): polls.append(record)
            }
        }
    }

    mutating func command(_ command: OAuthDeviceCommand) {
        apply(machine.handle(command))
    }

    mutating func resume() {
        apply(machine.resume())
    }

    /// Answers the request that is out, or fires the next timer, until `stop` holds, nothing is left to do, or the
    /// clock passes `limit`.
    mutating func run(limit: Duration = .seconds(7200), maxSteps: Int = 5000, stop: (Harness) -> Bool = { _ in false }) {
        let end = DeviceInstant(offset: limit)
        for _ in 0..<maxSteps {
            if stop(self) { return }
            if !outstanding.isEmpty {
                let request = outstanding.removeFirst()
                clock.advance(by: latency)
                let answer = server(request, self)
                apply(machine.handle(answer, for: request.id))
                continue
            }
            guard let (timer, at) = timers.min(by: { $0.value < $1.value }), at <= end else { return }
            timers[timer] = nil
            clock.advance(to: at)
            apply(machine.timerFired(timer))
        }
    }

    /// Gaps between consecutive poll sends.
    var pollGaps: [Duration] {
        zip(polls.dropFirst(), polls).map { $1.sentAt.duration(to: $0.sentAt) }
    }
}

/// Settings for a provider served at a loopback base URL, discovery off unless asked.
func settings(
    _ provider: OAuthProvider,
    authentication: OAuthClientAuthentication? = nil,
    discovery: OAuthDiscoveryMode = .off
) -> OAuthDeviceSettings {
    var settings = OAuthDeviceSettings(
        provider: provider,
        baseURL: "http://127.0.0.1:9000",
        client: OAuthClientCredentials(id: "tv-app", secret: "s3cr&t", authentication: authentication)
    )
    settings.discovery = discovery
    settings.placeholders = OAuthPathPlaceholders(tenant: "common", realm: "media")
    settings.scope = "openid offline_access"
    return settings
}

/// A server that grants after `pendingPolls` pending answers, with the given device authorization answer.
func grantingServer(
    pendingPolls: Int,
    authorization: [String: Any] = deviceAuthorization(),
    pending: @escaping () -> Answer = { json(400, ["error": "authorization_pending"]) }
) -> (OAuthRequest, Harness) -> Answer {
    { request, harness in
        switch request.purpose {
        case .deviceAuthorization: return json(200, authorization)
        case .poll: return harness.pollRequests.count > pendingPolls ? json(200, tokens()) : pending()
        default: return json(404, [:])
        }
    }
}

extension Array where Element == OAuthDeviceEvent {
    var pollOutcomes: [OAuthPollOutcome] {
        compactMap { if case .poll(let outcome) = $0 { return outcome } else { return nil } }
    }

    func contains(where matches: (OAuthDeviceEvent) -> Bool, count: Int) -> Bool {
        filter(matches).count == count
    }
}
