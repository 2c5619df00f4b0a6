#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import Logging
import Synchronization

/// The groups of endpoints fault injection is configured and counted by.
public enum EndpointClass: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// `/o/client/*` (DCR registration and tokens).
    case dcr
    /// Code creation and lookup: v2 `sessions`, v1 `reggie/…/regcode` (alias `regcode`).
    case sessions
    /// What a device polls: v2 `profiles/code/{code}`, v1 `tokens/authn` and `authenticate/{code}`.
    case poll
    /// v2 `decisions/*`, v1 `authorize`, `preauthorize`, `tokens/authz`, `tokens/media`, `mediatoken` (alias `authorize`).
    case decisions
    /// v2 `configuration`, v1 `config/{requestor}`.
    case config
    /// Every other API endpoint.
    case other

    /// The class named `name`, accepting the aliases `regcode` and `authorize`.
    public init?(name: String) {
        switch name {
        case "regcode": self = .sessions
        case "authorize": self = .decisions
        default: self.init(rawValue: name)
        }
    }
}

/// The kinds of injected faults, as counted by `GET /_sim/stats`.
public enum FaultKind: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// A 5xx answer with an openresty-style HTML body; the request is not processed.
    case error5xx
    /// Adobe's throttling answer (429, no `Retry-After`); the request is not processed.
    case throttle429
    /// A 429 carrying `Retry-After: N`; the request is not processed.
    case throttle429RetryAfter
    /// The connection is closed without any response; the request is not processed.
    case drop
    /// The request is processed, then answered 200 with a truncated body.
    case malformed
    /// A protected call is answered 401 as if its access token had expired; the request is not processed.
    case tokenExpiry
    /// A new code dies before its published expiry.
    case earlyExpiry
    /// The response was delayed.
    case latency
}

/// Fault probabilities and latency for one endpoint class. `nil` fields inherit from the overall default (and are 0
/// there).
///
/// The response faults (`error5xx`, `throttle429`, `throttle429RetryAfter`, `drop`, `malformed`, `tokenExpiry`) share
/// one draw per request, so each probability is exact and together they may not exceed 1.
public struct FaultRates: Sendable, Equatable {
    /// Probability of a 5xx answer.
    public var error5xx: Double?
    /// Statuses a 5xx answer picks from uniformly (default 500, 502, 503).
    public var error5xxStatuses: [Int]?
    /// Probability of a 429 without `Retry-After`.
    public var throttle429: Double?
    /// Probability of a 429 with `Retry-After`.
    public var throttle429RetryAfter: Double?
    /// The `Retry-After` value, in seconds (default 1).
    public var retryAfterSeconds: Int?
    /// Probability that the connection is closed without a response.
    public var drop: Double?
    /// Probability of a 200 with a truncated body.
    public var malformed: Double?
    /// Probability that a protected call (one that needs a bearer token or v1 signature) is answered 401 as if the
    /// token expired; elsewhere it has no effect.
    public var tokenExpiry: Double?
    /// Probability that a new code expires at issue time plus a random fraction of its TTL. Codes are created by the
    /// `sessions` class, so only its effective value counts.
    public var earlyExpiry: Double?
    /// Fixed latency added to every response, in milliseconds.
    public var latencyMs: Int?
    /// Extra latency drawn uniformly from 0…`latencySpreadMs` milliseconds.
    public var latencySpreadMs: Int?

    /// No faults.
    public init(
        error5xx: Double? = nil,
        error5xxStatuses: [Int]? = nil,
        throttle429: Double? = nil,
        throttle429RetryAfter: Double? = nil,
        retryAfterSeconds: Int? = nil,
        drop: Double? = nil,
        malformed: Double? = nil,
        tokenExpiry: Double? = nil,
        earlyExpiry: Double? = nil,
        latencyMs: Int? = nil,
        latencySpreadMs: Int? = nil
    ) {
        self.error5xx = error5xx
        self.error5xxStatuses = error5xxStatuses
        self.throttle429 = throttle429
        self.throttle429RetryAfter = throttle429RetryAfter
        self.retryAfterSeconds = retryAfterSeconds
        self.drop = drop
        self.malformed = malformed
        self.tokenExpiry = tokenExpiry
        self.earlyExpiry = earlyExpiry
        self.latencyMs = latencyMs
        self.latencySpreadMs = latencySpreadMs
    }

    /// Each field of `self`, or of `fallback` where `self` has none.
    func over(_ fallback: FaultRates) -> FaultRates {
        FaultRates(
            error5xx: self.error5xx ?? fallback.error5xx,
            error5xxStatuses: self.error5xxStatuses ?? fallback.error5xxStatuses,
            throttle429: self.throttle429 ?? fallback.throttle429,
            throttle429RetryAfter: self.throttle429RetryAfter ?? fallback.throttle429RetryAfter,
            retryAfterSeconds: self.retryAfterSeconds ?? fallback.retryAfterSeconds,
            drop: self.drop ?? fallback.drop,
            malformed: self.malformed ?? fallback.malformed,
            tokenExpiry: self.tokenExpiry ?? fallback.tokenExpiry,
            earlyExpiry: self.earlyExpiry ?? fallback.earlyExpiry,
            latencyMs: self.latencyMs ?? fallback.latencyMs,
            latencySpreadMs: self.latencySpreadMs ?? fallback.latencySpreadMs
        )
    }

    /// The response faults in draw order, with their probabilities (0 when unset).
    var responseFaults: [(FaultKind, Double)] {
        [
            (.drop, self.drop ?? 0),
            (.error5xx, self.error5xx ?? 0),
            (.throttle429, self.throttle429 ?? 0),
            (.throttle429RetryAfter, self.throttle429RetryAfter ?? 0),
            (.malformed, self.malformed ?? 0),
            (.tokenExpiry, self.tokenExpiry ?? 0),
        ]
    }
}

extension FaultRates: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case error5xx, error5xxStatuses, throttle429, throttle429RetryAfter, retryAfterSeconds, drop, malformed
        case tokenExpiry, earlyExpiry, latencyMs, latencySpreadMs
    }

    public init(from decoder: any Decoder) throws {
        let names = try decoder.container(keyedBy: AnyCodingKey.self)
        // Unknown keys are refused: a misspelt probability in a soak configuration must not silently mean 0.
        for key in names.allKeys where CodingKeys(rawValue: key.stringValue) == nil {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: names,
                debugDescription: "unknown fault setting \"\(key.stringValue)\""
            )
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            error5xx: try container.decodeIfPresent(Double.self, forKey: .error5xx),
            error5xxStatuses: try container.decodeIfPresent([Int].self, forKey: .error5xxStatuses),
            throttle429: try container.decodeIfPresent(Double.self, forKey: .throttle429),
            throttle429RetryAfter: try container.decodeIfPresent(Double.self, forKey: .throttle429RetryAfter),
            retryAfterSeconds: try container.decodeIfPresent(Int.self, forKey: .retryAfterSeconds),
            drop: try container.decodeIfPresent(Double.self, forKey: .drop),
            malformed: try container.decodeIfPresent(Double.self, forKey: .malformed),
            tokenExpiry: try container.decodeIfPresent(Double.self, forKey: .tokenExpiry),
            earlyExpiry: try container.decodeIfPresent(Double.self, forKey: .earlyExpiry),
            latencyMs: try container.decodeIfPresent(Int.self, forKey: .latencyMs),
            latencySpreadMs: try container.decodeIfPresent(Int.self, forKey: .latencySpreadMs)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.error5xx, forKey: .error5xx)
        try container.encodeIfPresent(self.error5xxStatuses, forKey: .error5xxStatuses)
        try container.encodeIfPresent(self.throttle429, forKey: .throttle429)
        try container.encodeIfPresent(self.throttle429RetryAfter, forKey: .throttle429RetryAfter)
        try container.encodeIfPresent(self.retryAfterSeconds, forKey: .retryAfterSeconds)
        try container.encodeIfPresent(self.drop, forKey: .drop)
        try container.encodeIfPresent(self.malformed, forKey: .malformed)
        try container.encodeIfPresent(self.tokenExpiry, forKey: .tokenExpiry)
        try container.encodeIfPresent(self.earlyExpiry, forKey: .earlyExpiry)
        try container.encodeIfPresent(self.latencyMs, forKey: .latencyMs)
        try container.encodeIfPresent(self.latencySpreadMs, forKey: .latencySpreadMs)
    }
}

/// Fault injection settings: an overall default plus per-class overrides.
///
/// JSON (for `PUT /_sim/faults` and `pass-sim --faults FILE`):
/// `{"default": {"error5xx": 0.05, "latencyMs": 50}, "poll": {"throttle429": 0.1}, "dcr": {…}}`.
public struct FaultConfiguration: Sendable, Equatable {
    /// Settings for every class, unless the class overrides them.
    public var defaults: FaultRates
    /// Per-class overrides, field by field.
    public var classes: [EndpointClass: FaultRates]

    /// No faults anywhere.
    public init(defaults: FaultRates = .init(), classes: [EndpointClass: FaultRates] = [:]) {
        self.defaults = defaults
        self.classes = classes
    }

    /// The effective settings of `endpointClass`.
    public func rates(for endpointClass: EndpointClass) -> FaultRates {
        (self.classes[endpointClass] ?? FaultRates()).over(self.defaults)
    }

    /// Throws when a probability is outside 0…1, the response faults of a class add up to more than 1, a 5xx
    /// status is not 500…599, or a latency or `Retry-After` is negative.
    public func validate() throws(FaultConfigurationError) {
        for endpointClass in EndpointClass.allCases {
            let rates = self.rates(for: endpointClass)
            let probabilities = rates.responseFaults.map { ($0.0.rawValue, $0.1) } + [("earlyExpiry", rates.earlyExpiry ?? 0)]
            for (name, value) in probabilities where !(0...1).contains(value) {
                throw FaultConfigurationError("\(name) of \(endpointClass.rawValue) must be between 0 and 1, not \(value)")
            }
            let total = rates.responseFaults.reduce(0) { $0 + $1.1 }
            if total > 1 + 1e-9 {
                throw FaultConfigurationError("the response fault probabilities of \(endpointClass.rawValue) add up to \(total), more than 1")
            }
            if let statuses = rates.error5xxStatuses, statuses.isEmpty || !statuses.allSatisfy({ (500...599).contains($0) }) {
                throw FaultConfigurationError("error5xxStatuses of \(endpointClass.rawValue) must be a non-empty list of 500…599")
            }
            if (rates.latencyMs ?? 0) < 0 || (rates.latencySpreadMs ?? 0) < 0 || (rates.retryAfterSeconds ?? 0) < 0 {
                throw FaultConfigurationError("latencies and retryAfterSeconds of \(endpointClass.rawValue) must not be negative")
            }
        }
    }
}

extension FaultConfiguration: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var defaults = FaultRates()
        var classes: [EndpointClass: FaultRates] = [:]
        for key in container.allKeys {
            if key.stringValue == "default" {
                defaults = try container.decode(FaultRates.self, forKey: key)
            } else if let endpointClass = EndpointClass(name: key.stringValue) {
                classes[endpointClass] = try container.decode(FaultRates.self, forKey: key)
            } else {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription: "unknown endpoint class \"\(key.stringValue)\" (expected default, "
                        + EndpointClass.allCases.map(\.rawValue).joined(separator: ", ") + ")"
                )
            }
        }
        self.init(defaults: defaults, classes: classes)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(self.defaults, forKey: AnyCodingKey("default"))
        for (endpointClass, rates) in self.classes {
            try container.encode(rates, forKey: AnyCodingKey(endpointClass.rawValue))
        }
    }
}

/// An invalid ``FaultConfiguration``.
public struct FaultConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A scripted outcome for a code: what the simulated user does, and when.
///
/// JSON: `{"outcome": "approve", "after": 10, "mvpd"?: "…", "userId"?: "…"}`, `{"outcome": "deny", "after"?: 0}`,
/// `{"outcome": "never"}`. `after` is in seconds: from the script call for `PUT /_sim/codes/{code}/script`, from
/// the code's issue time for ``SimulatorConfiguration/defaultCodeScript``.
public struct CodeScript: Sendable, Equatable, Codable {
    /// What happens to the code.
    public enum Outcome: String, Sendable, Codable {
        /// The user logs in (with `mvpd`, else the code's MVPD, else the first configured one).
        case approve
        /// The login fails: the code ends and polls get the dead-code answer.
        case deny
        /// Nobody logs in: automatic approval is off for this code (the admin API and login page still work).
        case never
    }

    /// What happens.
    public var outcome: Outcome
    /// Delay in seconds before it happens (0 when absent).
    public var after: Double?
    /// MVPD used by `approve`.
    public var mvpd: String?
    /// User id used by `approve`.
    public var userId: String?

    /// A script with `outcome` happening `after` seconds later.
    public init(outcome: Outcome, after: Double? = nil, mvpd: String? = nil, userId: String? = nil) {
        self.outcome = outcome
        self.after = after
        self.mvpd = mvpd
        self.userId = userId
    }

    /// The delay as milliseconds, never negative.
    var delayMillis: Int64 { Int64((max(self.after ?? 0, 0) * 1000).rounded()) }
}

/// A string coding key, for JSON objects whose keys are data.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) {
        self.stringValue = string
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

/// A small, fast, seedable generator (SplitMix64): the same seed replays the same fault sequence.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in 0..<1.
    mutating func unit() -> Double {
        Double(self.next() >> 11) * 0x1.0p-53
    }
}

/// What fault injection decided for one request.
struct FaultPlan: Sendable {
    enum Outcome: Sendable, Equatable {
        case error5xx(Int)
        case throttle429(retryAfter: Int?)
        case drop
        case malformed
        case tokenExpiry
    }

    var latency: Duration?
    var outcome: Outcome?
}

/// Counters reported by `GET /_sim/stats`.
public struct SimulatorStats: Sendable, Equatable, Codable {
    /// Requests by endpoint class, then by HTTP status (`"dropped"` for dropped connections).
    public var requests: [EndpointClass: [String: Int]]
    /// Injected faults by kind (every kind present, zeros included).
    public var faults: [FaultKind: Int]
    /// Injected faults by endpoint class, then kind.
    public var faultsByClass: [EndpointClass: [FaultKind: Int]]

    static var empty: SimulatorStats {
        SimulatorStats(
            requests: [:],
            faults: Dictionary(uniqueKeysWithValues: FaultKind.allCases.map { ($0, 0) }),
            faultsByClass: [:]
        )
    }
}

/// The live fault settings, the seeded generator and the counters; shared by every request.
///
/// A lock rather than an actor: it sits on every API request and each operation is a few arithmetic steps.
final class FaultInjector: Sendable {
    private struct Locked {
        var configuration: FaultConfiguration
        var generator: SplitMix64
        var stats: SimulatorStats
    }

    private let locked: Mutex<Locked>

    init(configuration: FaultConfiguration, seed: UInt64?) {
        var system = SystemRandomNumberGenerator()
        self.locked = Mutex(
            Locked(configuration: configuration, generator: SplitMix64(seed: seed ?? system.next()), stats: .empty)
        )
    }

    /// The settings in force.
    var configuration: FaultConfiguration {
        self.locked.withLock { $0.configuration }
    }

    /// Replaces the settings (already validated by the caller).
    func replace(_ configuration: FaultConfiguration) {
        self.locked.withLock { $0.configuration = configuration }
    }

    /// Decides latency and a response fault for one request of `endpointClass`. `tokenExpiry` only applies to
    /// `protected` calls; elsewhere its share of the draw means "no fault".
    func plan(for endpointClass: EndpointClass, protected: Bool) -> FaultPlan {
        self.locked.withLock { locked in
            let rates = locked.configuration.rates(for: endpointClass)
            var plan = FaultPlan()
            let fixed = max(rates.latencyMs ?? 0, 0)
            let spread = max(rates.latencySpreadMs ?? 0, 0)
            if fixed > 0 || spread > 0 {
                let extra = spread > 0 ? Int(locked.generator.next() % UInt64(spread + 1)) : 0
                let total = fixed + extra
                if total > 0 {
                    plan.latency = .milliseconds(total)
                    Self.count(.latency, endpointClass, in: &locked.stats)
                }
            }
            let faults = rates.responseFaults.filter { $0.1 > 0 }
            guard !faults.isEmpty else { return plan }
            var draw = locked.generator.unit()
            for (kind, probability) in faults {
                guard draw < probability else {
                    draw -= probability
                    continue
                }
                switch kind {
                case .drop: plan.outcome = .drop
                case .error5xx:
                    let statuses = rates.error5xxStatuses ?? [500, 502, 503]
                    let index = statuses.count > 1 ? Int(locked.generator.next() % UInt64(statuses.count)) : 0
                    plan.outcome = .error5xx(statuses.isEmpty ? 500 : statuses[index])
                case .throttle429: plan.outcome = .throttle429(retryAfter: nil)
                case .throttle429RetryAfter: plan.outcome = .throttle429(retryAfter: max(rates.retryAfterSeconds ?? 1, 0))
                case .malformed: plan.outcome = .malformed
                case .tokenExpiry:
                    guard protected else { return plan }
                    plan.outcome = .tokenExpiry
                case .earlyExpiry, .latency: return plan
                }
                Self.count(kind, endpointClass, in: &locked.stats)
                return plan
            }
            return plan
        }
    }

    /// When a new code should die early (earlyExpiry fault): an offset from issue time in 0..<`ttlMillis`, else `nil`.
    func earlyExpiryOffset(ttlMillis: Int64) -> Int64? {
        self.locked.withLock { locked in
            let probability = locked.configuration.rates(for: .sessions).earlyExpiry ?? 0
            guard probability > 0, locked.generator.unit() < probability else { return nil }
            Self.count(.earlyExpiry, .sessions, in: &locked.stats)
            return Int64(locked.generator.unit() * Double(max(ttlMillis, 0)))
        }
    }

    /// Counts one answered request.
    func record(_ endpointClass: EndpointClass, status: String) {
        self.locked.withLock { $0.stats.requests[endpointClass, default: [:]][status, default: 0] += 1 }
    }

    /// A snapshot of the counters.
    var stats: SimulatorStats {
        self.locked.withLock { $0.stats }
    }

    /// Zeroes the counters.
    func resetStats() {
        self.locked.withLock { $0.stats = .empty }
    }

    private static func count(_ kind: FaultKind, _ endpointClass: EndpointClass, in stats: inout SimulatorStats) {
        stats.faults[kind, default: 0] += 1
        stats.faultsByClass[endpointClass, default: [:]][kind, default: 0] += 1
    }
}

/// How a request path is classified for faults and stats.
struct RouteClassification: Sendable, Equatable {
    enum API: Sendable, Equatable {
        case dcr
        case v2
        case v1
    }

    let endpointClass: EndpointClass
    let api: API
    /// Whether the endpoint requires the caller's credentials (bearer token or v1 signature).
    let protected: Bool

    /// Classifies an API path; the `.json`/`.xml` suffix of v1 paths is ignored.
    init(method: HTTPRequest.Method, path: String) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if var last = segments.last {
            for suffix in [".json", ".xml"] where last.hasSuffix(suffix) {
                last.removeLast(suffix.count)
            }
            segments[segments.count - 1] = last
        }
        func segment(_ index: Int) -> String { index < segments.count ? segments[index] : "" }

        switch (segment(0), segment(1)) {
        case ("o", _):
            self.init(.dcr, .dcr, protected: false)
        case ("api", "v2"):
            if segment(2) == "authenticate" {
                self.init(.other, .v2, protected: false)
                return
            }
            switch segment(3) {
            case "configuration": self.init(.config, .v2, protected: true)
            case "sessions": self.init(.sessions, .v2, protected: true)
            case "profiles": self.init(segment(4) == "code" ? .poll : .other, .v2, protected: true)
            case "decisions": self.init(.decisions, .v2, protected: true)
            default: self.init(.other, .v2, protected: true)
            }
        case ("reggie", _):
            // Creating a code is a device call; reading or deleting a record is what the login web app does.
            self.init(.sessions, .v1, protected: segments.count <= 4 && method == .post)
        case ("api", "v1"):
            switch segment(2) {
            case "tokens":
                switch segment(3) {
                case "authn": self.init(.poll, .v1, protected: true)
                case "authz", "media": self.init(.decisions, .v1, protected: true)
                default: self.init(.other, .v1, protected: true)
                }
            case "authorize", "preauthorize", "mediatoken": self.init(.decisions, .v1, protected: true)
            case "config": self.init(.config, .v1, protected: false)
            case "authenticate": self.init(segments.count > 3 ? .poll : .other, .v1, protected: segments.count > 3)
            case "checkauthn": self.init(.other, .v1, protected: segments.count == 3)
            default: self.init(.other, .v1, protected: true)
            }
        default:
            self.init(.other, .v2, protected: false)
        }
    }

    private init(_ endpointClass: EndpointClass, _ api: API, protected: Bool) {
        self.endpointClass = endpointClass
        self.api = api
        self.protected = protected
    }
}

/// Applies fault injection and counts every API request by class and status.
///
/// It runs outside the throttle, so a throttled answer is counted and an injected fault never consumes a token.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SimulatorRequestContext

    let injector: FaultInjector
    let clock: SimulatorClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let route = RouteClassification(method: request.method, path: request.uri.path)
        let plan = self.injector.plan(for: route.endpointClass, protected: route.protected)
        if let latency = plan.latency {
            try await self.clock.sleep(for: latency)
        }
        if let outcome = plan.outcome {
            context.logger.debug(
                "fault injected",
                metadata: ["fault.kind": .string("\(outcome)"), "fault.class": .string(route.endpointClass.rawValue)]
            )
        }
        switch plan.outcome {
        case .drop:
            self.injector.record(route.endpointClass, status: "dropped")
            await context.closeConnection()
            // Never delivered over a real connection (it is closed); in-process router tests, which have no
            // connection, see this empty 500 instead.
            return Response(status: .internalServerError)
        case .error5xx(let code):
            self.injector.record(route.endpointClass, status: String(code))
            return Self.serverError(code)
        case .throttle429(let retryAfter):
            self.injector.record(route.endpointClass, status: "429")
            var response = Throttle.tooManyRequestsResponse()
            if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        case .tokenExpiry:
            self.injector.record(route.endpointClass, status: "401")
            if route.api == .v1 {
                return try V1Error.notAuthorized("access token expired").response(from: request, context: context)
            }
            return try EnhancedError.invalidAccessToken.response(from: request, context: context)
        case .malformed, nil:
            break
        }

        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            if plan.outcome == .malformed {
                self.injector.record(route.endpointClass, status: "200")
                return await Self.truncated(try error.response(from: request, context: context))
            }
            self.injector.record(route.endpointClass, status: String(error.status.code))
            throw error
        } catch {
            self.injector.record(route.endpointClass, status: "500")
            throw error
        }
        if plan.outcome == .malformed {
            self.injector.record(route.endpointClass, status: "200")
            return await Self.truncated(response)
        }
        self.injector.record(route.endpointClass, status: String(response.status.code))
        return response
    }

    /// A gateway-style error page, like the openresty pages Adobe's edge serves.
    static func serverError(_ code: Int) -> Response {
        // nginx/openresty's own wording for the statuses a gateway produces.
        let phrases = [
            500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Temporarily Unavailable",
            504: "Gateway Time-out", 505: "HTTP Version Not Supported", 507: "Insufficient Storage",
        ]
        let phrase = phrases[code] ?? "Server Error"
        let status = HTTPResponse.Status(code: code, reasonPhrase: phrase)
        let title = "\(code) \(phrase)"
        let body = "<html><head><title>\(title)</title></head><body><center><h1>\(title)</h1></center><hr><center>openresty</center></body></html>"
        return Response(
            status: status,
            headers: [.contentType: "text/html", .server: "openresty"],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }

    /// The same answer as 200 with only the first half of its body (at least a dangling `{"`), so it cannot parse.
    static func truncated(_ response: Response) async -> Response {
        let collector = BodyCollector()
        var body = response.body
        do {
            try await body.write(CollectingWriter(collector: collector))
        } catch {
            collector.buffer.clear()
        }
        var bytes = collector.buffer
        let kept = bytes.readableBytes / 2
        var truncated = bytes.readSlice(length: kept) ?? ByteBuffer()
        if truncated.readableBytes < 2 {
            truncated = ByteBuffer(string: #"{""#)
        }
        var headers = response.headers
        headers[.contentLength] = nil
        headers[.contentType] = headers[.contentType] ?? "application/json;charset=utf-8"
        body = .init(byteBuffer: truncated)
        return Response(status: .ok, headers: headers, body: body)
    }

    private final class BodyCollector {
        var buffer = ByteBuffer()
    }

    private struct CollectingWriter: ResponseBodyWriter {
        let collector: BodyCollector

        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.collector.buffer.writeBuffer(&buffer)
        }

        mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
            for buffer in buffers {
                try await self.write(buffer)
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
