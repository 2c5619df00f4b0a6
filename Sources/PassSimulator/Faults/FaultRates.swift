import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fault probabilities and latency for one endpoint class. `nil` fields inherit from the overall default (and are 0
/// there).
///
/// The response faults (`error5xx`, `throttle429`, `throttle429RetryAfter`, `drop`, `malformed`, `tokenExpiry`) share
/// one draw per request, so each probability is exact and together they may not exceed 1.
package struct FaultRates: Sendable, Equatable {
    /// Probability of a 5xx answer.
    package var error5xx: Double?
    /// Statuses a 5xx answer picks from uniformly (default 500, 502, 503).
    package var error5xxStatuses: [Int]?
    /// Probability of a 4xx answer (an edge's HTML page unless `errorAction` is set).
    package var error4xx: Double?
    /// Statuses a 4xx answer picks from uniformly (default 403).
    package var error4xxStatuses: [Int]?
    /// When set, 4xx and 5xx faults answer with Adobe's enhanced error JSON carrying this `action` (`none`,
    /// `retry`, `retry-after`, `configuration`, …; any value, to test unknown ones) instead of an HTML page.
    package var errorAction: String?
    /// The enhanced error's `code` (default: one Adobe lists with the action).
    package var errorCode: String?
    /// Probability of a 429 without `Retry-After`.
    package var throttle429: Double?
    /// Probability of a 429 with `Retry-After`.
    package var throttle429RetryAfter: Double?
    /// The `Retry-After` value, in seconds (default 1).
    package var retryAfterSeconds: Int?
    /// Probability that the connection is closed without a response.
    package var drop: Double?
    /// Probability of a 200 with a truncated body.
    package var malformed: Double?
    /// Probability that a protected call (one that needs a bearer token or v1 signature) is answered 401 as if the
    /// token expired; elsewhere it has no effect.
    package var tokenExpiry: Double?
    /// Probability that a new code expires at issue time plus a random fraction of its TTL. Codes are created by the
    /// `sessions` class, so only its effective value counts.
    package var earlyExpiry: Double?
    /// Fixed latency added to every response, in milliseconds.
    package var latencyMs: Int?
    /// Extra latency drawn uniformly from 0…`latencySpreadMs` milliseconds.
    package var latencySpreadMs: Int?
    /// Probability that a response is held back by a latency spike, on top of the latency above.
    package var latencySpike: Double?
    /// Length of a latency spike, in milliseconds (default 5000).
    package var latencySpikeMs: Int?

    /// No faults.
    package init(
        error5xx: Double? = nil,
        error5xxStatuses: [Int]? = nil,
        error4xx: Double? = nil,
        error4xxStatuses: [Int]? = nil,
        errorAction: String? = nil,
        errorCode: String? = nil,
        throttle429: Double? = nil,
        throttle429RetryAfter: Double? = nil,
        retryAfterSeconds: Int? = nil,
        drop: Double? = nil,
        malformed: Double? = nil,
        tokenExpiry: Double? = nil,
        earlyExpiry: Double? = nil,
        latencyMs: Int? = nil,
        latencySpreadMs: Int? = nil,
        latencySpike: Double? = nil,
        latencySpikeMs: Int? = nil
    ) {
        self.error5xx = error5xx
        self.error5xxStatuses = error5xxStatuses
        self.error4xx = error4xx
        self.error4xxStatuses = error4xxStatuses
        self.errorAction = errorAction
        self.errorCode = errorCode
        self.throttle429 = throttle429
        self.throttle429RetryAfter = throttle429RetryAfter
        self.retryAfterSeconds = retryAfterSeconds
        self.drop = drop
        self.malformed = malformed
        self.tokenExpiry = tokenExpiry
        self.earlyExpiry = earlyExpiry
        self.latencyMs = latencyMs
        self.latencySpreadMs = latencySpreadMs
        self.latencySpike = latencySpike
        self.latencySpikeMs = latencySpikeMs
    }

    /// Each field of `self`, or of `fallback` where `self` has none.
    func over(_ fallback: FaultRates) -> FaultRates {
        FaultRates(
            error5xx: self.error5xx ?? fallback.error5xx,
            error5xxStatuses: self.error5xxStatuses ?? fallback.error5xxStatuses,
            error4xx: self.error4xx ?? fallback.error4xx,
            error4xxStatuses: self.error4xxStatuses ?? fallback.error4xxStatuses,
            errorAction: self.errorAction ?? fallback.errorAction,
            errorCode: self.errorCode ?? fallback.errorCode,
            throttle429: self.throttle429 ?? fallback.throttle429,
            throttle429RetryAfter: self.throttle429RetryAfter ?? fallback.throttle429RetryAfter,
            retryAfterSeconds: self.retryAfterSeconds ?? fallback.retryAfterSeconds,
            drop: self.drop ?? fallback.drop,
            malformed: self.malformed ?? fallback.malformed,
            tokenExpiry: self.tokenExpiry ?? fallback.tokenExpiry,
            earlyExpiry: self.earlyExpiry ?? fallback.earlyExpiry,
            latencyMs: self.latencyMs ?? fallback.latencyMs,
            latencySpreadMs: self.latencySpreadMs ?? fallback.latencySpreadMs,
            latencySpike: self.latencySpike ?? fallback.latencySpike,
            latencySpikeMs: self.latencySpikeMs ?? fallback.latencySpikeMs
        )
    }

    /// The response faults in draw order, with their probabilities (0 when unset).
    var responseFaults: [(FaultKind, Double)] {
        [
            (.drop, self.drop ?? 0),
            (.error5xx, self.error5xx ?? 0),
            (.error4xx, self.error4xx ?? 0),
            (.throttle429, self.throttle429 ?? 0),
            (.throttle429RetryAfter, self.throttle429RetryAfter ?? 0),
            (.malformed, self.malformed ?? 0),
            (.tokenExpiry, self.tokenExpiry ?? 0),
        ]
    }
}

extension FaultRates: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case error5xx, error5xxStatuses, error4xx, error4xxStatuses, errorAction, errorCode, throttle429, throttle429RetryAfter, retryAfterSeconds,
            drop, malformed
        case tokenExpiry, earlyExpiry, latencyMs, latencySpreadMs, latencySpike, latencySpikeMs
    }

    package init(from decoder: any Decoder) throws {
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
            error4xx: try container.decodeIfPresent(Double.self, forKey: .error4xx),
            error4xxStatuses: try container.decodeIfPresent([Int].self, forKey: .error4xxStatuses),
            errorAction: try container.decodeIfPresent(String.self, forKey: .errorAction),
            errorCode: try container.decodeIfPresent(String.self, forKey: .errorCode),
            throttle429: try container.decodeIfPresent(Double.self, forKey: .throttle429),
            throttle429RetryAfter: try container.decodeIfPresent(Double.self, forKey: .throttle429RetryAfter),
            retryAfterSeconds: try container.decodeIfPresent(Int.self, forKey: .retryAfterSeconds),
            drop: try container.decodeIfPresent(Double.self, forKey: .drop),
            malformed: try container.decodeIfPresent(Double.self, forKey: .malformed),
            tokenExpiry: try container.decodeIfPresent(Double.self, forKey: .tokenExpiry),
            earlyExpiry: try container.decodeIfPresent(Double.self, forKey: .earlyExpiry),
            latencyMs: try container.decodeIfPresent(Int.self, forKey: .latencyMs),
            latencySpreadMs: try container.decodeIfPresent(Int.self, forKey: .latencySpreadMs),
            latencySpike: try container.decodeIfPresent(Double.self, forKey: .latencySpike),
            latencySpikeMs: try container.decodeIfPresent(Int.self, forKey: .latencySpikeMs)
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.error5xx, forKey: .error5xx)
        try container.encodeIfPresent(self.error5xxStatuses, forKey: .error5xxStatuses)
        try container.encodeIfPresent(self.error4xx, forKey: .error4xx)
        try container.encodeIfPresent(self.error4xxStatuses, forKey: .error4xxStatuses)
        try container.encodeIfPresent(self.errorAction, forKey: .errorAction)
        try container.encodeIfPresent(self.errorCode, forKey: .errorCode)
        try container.encodeIfPresent(self.throttle429, forKey: .throttle429)
        try container.encodeIfPresent(self.throttle429RetryAfter, forKey: .throttle429RetryAfter)
        try container.encodeIfPresent(self.retryAfterSeconds, forKey: .retryAfterSeconds)
        try container.encodeIfPresent(self.drop, forKey: .drop)
        try container.encodeIfPresent(self.malformed, forKey: .malformed)
        try container.encodeIfPresent(self.tokenExpiry, forKey: .tokenExpiry)
        try container.encodeIfPresent(self.earlyExpiry, forKey: .earlyExpiry)
        try container.encodeIfPresent(self.latencyMs, forKey: .latencyMs)
        try container.encodeIfPresent(self.latencySpreadMs, forKey: .latencySpreadMs)
        try container.encodeIfPresent(self.latencySpike, forKey: .latencySpike)
        try container.encodeIfPresent(self.latencySpikeMs, forKey: .latencySpikeMs)
    }
}
