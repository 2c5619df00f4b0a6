import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A scripted outcome for a code: what the simulated user does, and when.
///
/// JSON: `{"outcome": "approve", "after": 10, "mvpd"?: "…", "userId"?: "…"}`, `{"outcome": "deny", "after"?: 0}`,
/// `{"outcome": "never"}`. `after` is in seconds: from the script call for `PUT /_sim/codes/{code}/script`, from
/// the code's issue time for ``SimulatorConfiguration/defaultCodeScript``.
package struct CodeScript: Sendable, Equatable, Codable {
    /// What happens to the code.
    package enum Outcome: String, Sendable, Codable {
        /// The user logs in (with `mvpd`, else the code's MVPD, else the first configured one).
        case approve
        /// The login fails: the code ends and polls get the dead-code answer.
        case deny
        /// Nobody logs in: automatic approval is off for this code (the admin API and login page still work).
        case never
    }

    /// What happens.
    package var outcome: Outcome
    /// Delay in seconds before it happens (0 when absent).
    package var after: Double?
    /// MVPD used by `approve`.
    package var mvpd: String?
    /// User id used by `approve`.
    package var userId: String?

    /// A script with `outcome` happening `after` seconds later.
    package init(outcome: Outcome, after: Double? = nil, mvpd: String? = nil, userId: String? = nil) {
        self.outcome = outcome
        self.after = after
        self.mvpd = mvpd
        self.userId = userId
    }

    /// The delay as milliseconds, never negative.
    var delayMillis: Int64 { Int64((max(self.after ?? 0, 0) * 1000).rounded()) }
}
