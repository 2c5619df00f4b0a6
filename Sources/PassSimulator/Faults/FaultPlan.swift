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

    /// The entry of Adobe's REST v2 list for ``code`` when it is one of the MVPD item errors, which Adobe lists with
    /// status 403 only (the `retry` codes `maximum_execution_time_exceeded`, `network_received_error`,
    /// `network_connection_timeout` among them):
    /// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-standard/error-reporting/enhanced-error-codes
    var catalogued: EnhancedError? {
        ItemErrorCode(rawValue: self.code)?.error(details: nil)
    }

    /// The HTTP status the fault answers with: Adobe's for a catalogued code, else the one the fault drew.
    func status(drawn: Int) -> Int {
        self.catalogued.map { Int($0.status.code) } ?? drawn
    }

    /// A code Adobe's catalogue lists with `action` (REST v2 list; the SDKs' list for `degradation`), so a
    /// client that reads codes as well as actions sees a coherent answer. `retry` gets
    /// `maximum_execution_time_exceeded`, answered 403 whatever status was drawn (see ``catalogued``).
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
