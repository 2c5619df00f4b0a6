/// The remedy an enhanced error recommends: its `action` field (reference §9.2). Adobe's REST list has
/// `none`, `configuration`, `application-registration`, `authentication`, `authorization` and `retry`; the
/// SDKs' Preauthorize API adds `degradation` and `retry-after`, and Concurrency Monitoring answers `refresh`.
/// Adobe may add values ("future updates … could add values to the finite sets"): one this version does
/// not know is kept as ``unknown(_:)`` and read as if the answer carried no action.
package enum ErrorAction: Sendable, Hashable {
    /// No predefined remedy; often an improper request.
    case none
    /// Retrying the request might help.
    case retry
    /// Retrying after the period the answer gives (`Retry-After`) might help.
    case retryAfter
    /// The credentials the call carried must be refreshed.
    case refresh
    /// The integration's configuration must change (TVE Dashboard).
    case configuration
    /// The client application must register again (DCR).
    case applicationRegistration
    /// The user must authenticate again.
    case authentication
    /// The user must obtain authorization for the resource again.
    case authorization
    /// A degradation rule applies.
    case degradation
    /// A value this version does not know, as sent.
    case unknown(String)

    /// The action as Adobe spells it.
    package init(rawValue: String) {
        switch rawValue {
        case "none": self = .none
        case "retry": self = .retry
        case "retry-after": self = .retryAfter
        case "refresh": self = .refresh
        case "configuration": self = .configuration
        case "application-registration": self = .applicationRegistration
        case "authentication": self = .authentication
        case "authorization": self = .authorization
        case "degradation": self = .degradation
        default: self = .unknown(rawValue)
        }
    }

    /// Adobe's spelling.
    package var rawValue: String {
        switch self {
        case .none: "none"
        case .retry: "retry"
        case .retryAfter: "retry-after"
        case .refresh: "refresh"
        case .configuration: "configuration"
        case .applicationRegistration: "application-registration"
        case .authentication: "authentication"
        case .authorization: "authorization"
        case .degradation: "degradation"
        case .unknown(let value): value
        }
    }

    /// The documented actions, in Adobe's order.
    package static let known: [ErrorAction] = [
        .none, .retry, .retryAfter, .refresh, .configuration, .applicationRegistration, .authentication, .authorization, .degradation,
    ]
}

extension ErrorAction: CustomStringConvertible {
    package var description: String { rawValue }
}

/// Written and read as Adobe's string, so stored errors keep the wire's shape.
extension ErrorAction: Codable {
    package init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Lets fixtures and callers write Adobe's spelling (`action: "retry"`).
extension ErrorAction: ExpressibleByStringLiteral {
    package init(stringLiteral value: String) {
        self.init(rawValue: value)
    }
}
