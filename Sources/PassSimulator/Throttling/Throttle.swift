import Hummingbird
import Synchronization

/// Adobe's per-device token bucket (reference §8.2): a burst of `capacity` requests, refilled at `refillPerSecond`.
///
/// Adobe identifies the device by its address, so by default that is the key (``ThrottleKey/ip``): the TCP peer's, or
/// the first `X-Forwarded-For` address when the simulator trusts the header (server-to-server calls through a proxy).
/// A device's own header is never trusted otherwise: a box cannot pick its address. Buckets that are full again are dropped, and the table never holds more than
/// ``maxBuckets``.
///
/// A lock rather than an actor: the check sits on every API request and must not queue behind state work.
final class Throttle: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Int64
    }

    private struct Buckets {
        var byKey: [String: Bucket] = [:]
        var lastEviction: Int64
    }

    /// Above this many buckets an eviction pass runs immediately instead of waiting for the next interval.
    static let defaultMaxBuckets = 200_000

    let capacity: Double
    let refillPerSecond: Double
    let maxBuckets: Int
    private let clock: SimulatorClock
    private let buckets: Mutex<Buckets>

    init(capacity: Int, refillPerSecond: Double, clock: SimulatorClock, maxBuckets: Int = Throttle.defaultMaxBuckets) {
        self.capacity = Double(max(capacity, 1))
        self.refillPerSecond = max(refillPerSecond, 0.000_001)
        self.maxBuckets = max(maxBuckets, 1)
        self.clock = clock
        self.buckets = Mutex(Buckets(lastEviction: clock.nowMillis))
    }

    /// Time for an empty bucket to fill up again; an idle bucket older than this equals a fresh one.
    private var refillMillis: Int64 { Int64((self.capacity / self.refillPerSecond * 1000).rounded(.up)) }

    /// Takes one token from `key`'s bucket; `false` when the bucket is empty.
    func allow(_ key: String) -> Bool {
        let now = self.clock.nowMillis
        return self.buckets.withLock { state in
            if now - state.lastEviction >= self.refillMillis || (state.byKey.count >= self.maxBuckets && state.byKey[key] == nil) {
                self.evictFullBuckets(&state, now: now)
            }
            var bucket = state.byKey[key] ?? Bucket(tokens: self.capacity, updatedAt: now)
            let elapsed = Double(max(now - bucket.updatedAt, 0)) / 1000
            bucket.tokens = min(self.capacity, bucket.tokens + elapsed * self.refillPerSecond)
            bucket.updatedAt = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            state.byKey[key] = bucket
            return allowed
        }
    }

    /// Number of buckets currently held.
    var bucketCount: Int { self.buckets.withLock { $0.byKey.count } }

    /// Drops buckets idle long enough to be full again (a fresh bucket is the same). If the table is still at its cap,
    /// the fullest buckets go too, down to nine tenths of the cap: forgetting a nearly full bucket changes little,
    /// while the buckets of clients being throttled are kept, so a flood of new addresses cannot reset them.
    private func evictFullBuckets(_ state: inout Buckets, now: Int64) {
        state.lastEviction = now
        let refill = self.refillMillis
        state.byKey = state.byKey.filter { now - $0.value.updatedAt < refill }
        guard state.byKey.count >= self.maxBuckets else { return }
        let keep = self.maxBuckets * 9 / 10
        let emptiest = state.byKey.sorted { self.tokens(in: $0.value, now: now) < self.tokens(in: $1.value, now: now) }.prefix(keep)
        state.byKey = Dictionary(uniqueKeysWithValues: emptiest.map { ($0.key, $0.value) })
    }

    private func tokens(in bucket: Bucket, now: Int64) -> Double {
        min(self.capacity, bucket.tokens + Double(max(now - bucket.updatedAt, 0)) / 1000 * self.refillPerSecond)
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
