#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authorization granted by v1 `authorize` (the "AuthZ token"), per resource.
struct AuthorizationGrant: Sendable, Equatable, Codable {
    let resource: String
    let mvpd: String
    let notBefore: Int64
    let notAfter: Int64
}
