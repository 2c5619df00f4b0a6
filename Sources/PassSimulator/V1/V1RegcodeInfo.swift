#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The optional client fields a v1 registration code echoes in `info` (reference §4.1).
struct V1RegcodeInfo: Sendable, Equatable, Codable {
    var deviceType: String?
    var deviceUser: String?
    var appId: String?
    var appVersion: String?
    var registrationURL: String?
}
