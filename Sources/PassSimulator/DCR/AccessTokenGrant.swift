#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An access token issued by `POST /o/client/token`.
struct AccessTokenGrant: Sendable, Codable {
    let id: String
    let accessToken: String
    let clientId: String
    let createdAt: Int64
    let expiresAt: Int64
}
