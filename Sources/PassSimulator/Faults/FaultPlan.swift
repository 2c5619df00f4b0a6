import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
