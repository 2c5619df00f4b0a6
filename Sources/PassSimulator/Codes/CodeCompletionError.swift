#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why completing a code failed.
package enum CodeCompletionError: Error, Sendable, Equatable {
    /// No such code (never issued, or purged long after expiry).
    case unknownCode
    /// The code is past its `notAfter`, or a newer code replaced it.
    case codeGone
    /// The MVPD is not configured.
    case unknownMVPD(String)
    /// The code was already completed with another MVPD.
    case alreadyCompleted(SimulatedProfile)
}
