import Hummingbird
import Synchronization

/// Adobe's per-client limit (reference §8.2): 1 request per second plus a burst of 10, as nginx's `limit_req` counts
/// it (Adobe's 429 comes from openresty): each bucket holds the requests made beyond the rate (`excess`, in
/// thousandths of a request), drained at the rate; a request that would push it past the burst is refused and changes
/// nothing, so waiting one second after a 429 always suffices.
///
/// This is a token bucket of `burst + 1` tokens: a new client gets 11 requests at once, not 10. Adobe's scenario table
/// (throttling-mechanism.md, "Scenario example for throttling",
/// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/throttling-mechanism)
/// needs that reading: it answers a request at 2.2 s ("3 calls consumed from the limit and 10 calls marked as
/// burst") after twelve earlier ones, refuses those at 2.4, 2.6 and 2.8 s, and answers the one at 3.1 s. A bucket of
/// 10 tokens would refuse the 2.2 s call. `ThrottleTests` replays the table row by row.
///
/// Adobe identifies the device by its address, so by default that is the key (``ThrottleKey/ip``): the TCP peer's, or
/// the first `X-Forwarded-For` address when the simulator trusts the header (server-to-server calls through a proxy).
/// A device's own header is never trusted otherwise: a box cannot pick its address. Buckets that have drained are
/// dropped (a new bucket is the same), and the table never holds more than ``maxBuckets``.
///
/// Integer arithmetic in thousandths, like nginx's, so a wait of exactly one second after a 429 is never a rounding
/// error away from enough.
///
/// A lock rather than an actor: the check sits on every API request and must not queue behind state work.
final class Throttle: Sendable {
    private struct Bucket {
        /// Requests beyond the rate, in thousandths, as of `updatedAt`.
        var excess: Int64
        var updatedAt: Int64
    }

    private struct Buckets {
        var byKey: [String: Bucket] = [:]
        var lastEviction: Int64
    }

    /// Above this many buckets an eviction pass runs immediately instead of waiting for the next interval.
    static let defaultMaxBuckets = 200_000

    /// Requests allowed beyond the rate (Adobe: 10).
    let burst: Int
    /// Requests per second (Adobe: 1).
    let ratePerSecond: Double
    let maxBuckets: Int
    private let clock: SimulatorClock
    private let buckets: Mutex<Buckets>

    init(burst: Int, ratePerSecond: Double, clock: SimulatorClock, maxBuckets: Int = Throttle.defaultMaxBuckets) {
        self.burst = max(burst, 0)
        self.ratePerSecond = max(ratePerSecond, 0.000_001)
        self.maxBuckets = max(maxBuckets, 1)
        self.clock = clock
        self.buckets = Mutex(Buckets(lastEviction: clock.nowMillis))
    }

    /// The burst in thousandths of a request.
    private var burstMillis: Int64 { Int64(self.burst) * 1000 }

    /// Time for the fullest bucket to drain until its next request counts as a new client's.
    private var drainMillis: Int64 { Int64((Double(self.burstMillis + 1000) / self.ratePerSecond).rounded(.up)) }

    /// `bucket`'s excess at `now`, drained at the rate (thousandths of a request per millisecond = requests/s).
    private func excess(of bucket: Bucket, now: Int64) -> Int64 {
        let drained = Int64((Double(max(now - bucket.updatedAt, 0)) * self.ratePerSecond).rounded(.down))
        return bucket.excess - drained
    }

    /// Counts one request of `key`; `false` when it is over the limit (and then not counted).
    func allow(_ key: String) -> Bool {
        let now = self.clock.nowMillis
        return self.buckets.withLock { state in
            if now - state.lastEviction >= self.drainMillis || (state.byKey.count >= self.maxBuckets && state.byKey[key] == nil) {
                self.evictDrainedBuckets(&state, now: now)
            }
            guard let bucket = state.byKey[key] else {
                // A new client: its first request costs nothing beyond the rate (nginx starts the excess at 0).
                state.byKey[key] = Bucket(excess: 0, updatedAt: now)
                return true
            }
            let excess = max(self.excess(of: bucket, now: now) + 1000, 0)
            guard excess <= self.burstMillis else { return false }
            state.byKey[key] = Bucket(excess: excess, updatedAt: now)
            return true
        }
    }

    /// Number of buckets currently held.
    var bucketCount: Int { self.buckets.withLock { $0.byKey.count } }

    /// Drops buckets drained enough that their next request counts as a new client's. If the table is still at its
    /// cap, the most drained buckets go too, down to nine tenths of the cap: forgetting a nearly drained bucket changes
    /// little, while the buckets of clients being throttled are kept, so a flood of new addresses cannot reset them.
    private func evictDrainedBuckets(_ state: inout Buckets, now: Int64) {
        state.lastEviction = now
        state.byKey = state.byKey.filter { self.excess(of: $0.value, now: now) > -1000 }
        guard state.byKey.count >= self.maxBuckets else { return }
        let keep = self.maxBuckets * 9 / 10
        let fullest = state.byKey.sorted { self.excess(of: $0.value, now: now) > self.excess(of: $1.value, now: now) }.prefix(keep)
        state.byKey = Dictionary(uniqueKeysWithValues: fullest.map { ($0.key, $0.value) })
    }

    /// The device identity of a DCR or v2 request: `AP-Device-Identifier`, else its address.
    static func deviceKey(for request: Request, context: SimulatorRequestContext, trustingForwardedFor: Bool) -> String {
        if let device = request.headers[.apDeviceIdentifier], !device.isEmpty { return "device:" + device }
        return self.addressKey(for: request, context: context, trustingForwardedFor: trustingForwardedFor)
    }

    /// The identity of a v1 request: its `deviceId` parameter (query, or a form body, which is buffered for the
    /// handler), else its address.
    static func v1Key(for request: inout Request, context: SimulatorRequestContext, trustingForwardedFor: Bool) async throws -> String {
        if let deviceId = request.uri.query.flatMap({ FormData.parse($0)["deviceId"] }), !deviceId.isEmpty {
            return "v1device:" + deviceId
        }
        if request.method == .post, let type = request.headers[.contentType], type.lowercased().hasPrefix("application/x-www-form-urlencoded") {
            let buffer = try await request.collectBody(upTo: context.maxUploadSize)
            if let deviceId = FormData.parse(String(buffer: buffer))["deviceId"], !deviceId.isEmpty {
                return "v1device:" + deviceId
            }
        }
        return self.addressKey(for: request, context: context, trustingForwardedFor: trustingForwardedFor)
    }

    /// The address identity: the TCP peer, or the first address of a trusted `X-Forwarded-For`.
    static func addressKey(for request: Request, context: SimulatorRequestContext, trustingForwardedFor: Bool) -> String {
        "ip:" + (request.clientAddress(context: context, trustingForwardedFor: trustingForwardedFor) ?? "unknown")
    }

    /// Adobe's throttling answer, body and headers as in reference §8.2 (no `Retry-After`).
    static func tooManyRequestsResponse() -> Response {
        let body =
            "<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1></center>"
            + "<hr><center>openresty</center></body></html>"
        return Response(
            status: .tooManyRequests,
            headers: [
                .contentType: "text/html",
                .server: "openresty",
                .accessControlAllowHeaders:
                    "ap_11,ap_42,ap_z,ap_19,ap_21,ap_23,authorization,content-type,pass_sfp,AP-Session-Identifier,AP-Device-Identifier,AP-SDK-Identifier,X-Device-Info",
                .accessControlExposeHeaders: "pass_sfp,Authzf-Error-Code,Authzf-Sub-Error-Code,Authzf-Error-Details",
            ],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }
}

/// Applies ``Throttle`` to the routes of a group.
struct ThrottleMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    /// Which API the group serves, for keying by device.
    enum API: Sendable {
        /// DCR and v2: the device is `AP-Device-Identifier`.
        case dcrAndV2
        /// v1: the device is the `deviceId` parameter.
        case v1
        /// The OAuth device flow names no device: keyed by address either way.
        case oauth
    }

    let throttle: Throttle
    let key: ThrottleKey
    let api: API
    /// ``SimulatorConfiguration/trustForwardedFor``.
    let trustsForwardedFor: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let key =
            switch (self.key, self.api) {
            case (.ip, _), (.device, .oauth): Throttle.addressKey(for: request, context: context, trustingForwardedFor: self.trustsForwardedFor)
            case (.device, .dcrAndV2): Throttle.deviceKey(for: request, context: context, trustingForwardedFor: self.trustsForwardedFor)
            case (.device, .v1): try await Throttle.v1Key(for: &request, context: context, trustingForwardedFor: self.trustsForwardedFor)
            }
        guard self.throttle.allow(key) else {
            context.logger.debug("throttled", metadata: ["throttle.key": .string(key)])
            return Throttle.tooManyRequestsResponse()
        }
        return try await next(request, context)
    }
}
