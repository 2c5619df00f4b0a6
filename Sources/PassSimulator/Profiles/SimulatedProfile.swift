#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authenticated profile, created when a code completes (reference §7.6).
public struct SimulatedProfile: Sendable, Equatable, Codable {
    /// The MVPD that authenticated the user (also the profile's `issuer`).
    public let mvpd: String
    /// The `userID` attribute.
    public let userId: String
    /// The `householdID` attribute.
    public let householdId: String
    /// Start of validity, epoch milliseconds.
    public let notBefore: Int64
    /// End of validity, epoch milliseconds.
    public let notAfter: Int64
    /// Id of the authentication session that created the profile.
    public let sessionId: String
    /// User metadata by name (`userID`, `householdID`, `zip`, `maxRating`, `channelID`, `encryptedZip`, …).
    public let attributes: [String: ProfileAttribute]
}
