import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The kinds of injected faults, as counted by `GET /_sim/stats`.
package enum FaultKind: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// A 5xx answer with an openresty-style HTML body (or Adobe's enhanced error, see `errorAction`); the
    /// request is not processed.
    case error5xx
    /// A 4xx answer with an openresty-style HTML body, as an edge that refuses a request sends it (or Adobe's
    /// enhanced error, see `errorAction`); the request is not processed.
    case error4xx
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
    /// The response was held back by a latency spike.
    case latencySpike
}
