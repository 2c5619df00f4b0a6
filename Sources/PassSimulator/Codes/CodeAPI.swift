#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which API generation a code belongs to: v2 sessions and v1 registration codes live side by side but are not
/// visible to each other's endpoints.
package enum CodeAPI: String, Sendable, Equatable, Codable {
    /// `POST /api/v2/{sp}/sessions`.
    case v2
    /// `POST /reggie/v1/{requestor}/regcode`.
    case v1
}
