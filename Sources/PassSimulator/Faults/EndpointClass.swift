import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The groups of endpoints fault injection is configured and counted by.
package enum EndpointClass: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// `/o/client/*` (DCR registration and tokens).
    case dcr
    /// Code creation and lookup: v2 `sessions`, v1 `reggie/…/regcode` (alias `regcode`), the OAuth device
    /// authorization endpoint.
    case sessions
    /// What a device polls: v2 `profiles/code/{code}`, v1 `tokens/authn` and `authenticate/{code}`, the OAuth token
    /// endpoint (device code polls and refreshes).
    case poll
    /// v2 `decisions/*`, v1 `authorize`, `preauthorize`, `tokens/authz`, `tokens/media`, `mediatoken` (alias `authorize`).
    case decisions
    /// v2 `configuration`, v1 `config/{requestor}`, the OAuth discovery documents.
    case config
    /// Every other API endpoint (OAuth revocation, introspection and userinfo among them).
    case other

    /// The class named `name`, accepting the aliases `regcode` and `authorize`.
    package init?(name: String) {
        switch name {
        case "regcode": self = .sessions
        case "authorize": self = .decisions
        default: self.init(rawValue: name)
        }
    }
}
