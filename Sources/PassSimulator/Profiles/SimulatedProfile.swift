#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authenticated profile, created when a code completes (reference §7.6).
package struct SimulatedProfile: Sendable, Equatable, Codable {
    /// The MVPD that authenticated the user (also the profile's `issuer`).
    package let mvpd: String
    /// The `userID` attribute.
    package let userId: String
    /// The `householdID` attribute.
    package let householdId: String
    /// Start of validity, epoch milliseconds.
    package let notBefore: Int64
    /// End of validity, epoch milliseconds.
    package let notAfter: Int64
    /// Id of the authentication session that created the profile.
    package let sessionId: String
    /// User metadata by name (`userID`, `householdID`, `zip`, `maxRating`, `channelID`, `encryptedZip`, …).
    package let attributes: [String: ProfileAttribute]
    /// How the profile was obtained (`regular` for a basic login).
    package internal(set) var type: ProfileType = .regular

    /// The profile's `issuer`: the MVPD, `Apple` or `Adobe` (sso.md §2.5).
    package var issuer: String { self.type.issuer(mvpd: self.mvpd) }
}

extension SimulatedProfile {
    private enum CodingKeys: String, CodingKey {
        case mvpd, userId, householdId, notBefore, notAfter, sessionId, attributes, type
    }

    /// Profiles written before SSO existed have no `type`: they are `regular`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            mvpd: try container.decode(String.self, forKey: .mvpd),
            userId: try container.decode(String.self, forKey: .userId),
            householdId: try container.decode(String.self, forKey: .householdId),
            notBefore: try container.decode(Int64.self, forKey: .notBefore),
            notAfter: try container.decode(Int64.self, forKey: .notAfter),
            sessionId: try container.decode(String.self, forKey: .sessionId),
            attributes: try container.decode([String: ProfileAttribute].self, forKey: .attributes),
            type: try container.decodeIfPresent(ProfileType.self, forKey: .type) ?? .regular
        )
    }
}
