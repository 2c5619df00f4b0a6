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
        case error4xx(Int)
        case throttle429(retryAfter: Int?)
        case drop
        case malformed
        case tokenExpiry
    }

    var latency: Duration?
    var outcome: Outcome?
    /// The enhanced error a 4xx or 5xx fault carries instead of an HTML page (`errorAction` set).
    var enhancedError: InjectedEnhancedError?
}

/// Adobe's enhanced error body (reference §9.2) an injected 4xx or 5xx carries: the action under test, a code
/// from Adobe's catalogue (or the configured one), and `Retry-After` when the action is `retry-after`.
struct InjectedEnhancedError: Sendable, Equatable {
    var action: String
    var code: String
    var retryAfterSeconds: Int?

    /// A code Adobe's catalogue lists with `action` (REST v2 list; the SDKs' list for `degradation`), so a
    /// client that reads codes as well as actions sees a coherent answer.
    static func defaultCode(action: String, status: Int) -> String {
        switch action {
        case "retry", "retry-after": "maximum_execution_time_exceeded"
        case "configuration": status >= 500 ? "invalid_configuration_platform" : "too_many_resources"
        case "application-registration": "invalid_access_token_client_application"
        case "authentication": "authenticated_profile_invalidated"
        case "authorization": "authorization_not_found"
        case "degradation": "authorization_denied_by_degradation_rule"
        default: status >= 500 ? "internal_server_error" : "invalid_integration"
        }
    }
}
