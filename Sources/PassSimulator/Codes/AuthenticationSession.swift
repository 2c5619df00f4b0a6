#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authentication session and its code, as the simulator holds it.
package struct AuthenticationSession: Sendable {
    /// The state of a session at a given time.
    package enum Status: Sendable, Equatable {
        /// Waiting for the user to log in on a second screen.
        case pending
        /// Logged in; the profile stays retrievable by code until the code's `notAfter`.
        case completed(SimulatedProfile)
        /// Past its `notAfter`.
        case expired
        /// Replaced by a newer code of the same device.
        case superseded
    }

    /// Why a code ended before its window closed.
    enum Cutoff: String, Sendable, Equatable, Codable {
        /// The earlyExpiry fault picked this moment.
        case earlyExpiry
        /// A script denied the login.
        case denied
        /// The v1 record was deleted.
        case deleted
    }

    /// The 7-character code shown on the TV.
    package let code: String
    /// The API that issued the code.
    package let api: CodeAPI
    /// Opaque session id (`sessionId`).
    package let sessionId: String
    /// The service provider (requestor) the code belongs to.
    package let serviceProvider: String
    /// The Base64 value of the creating device's `AP-Device-Identifier: fingerprint <value>`.
    package let deviceIdentifier: String
    /// DCR client that created the session.
    package let clientId: String
    /// Selected MVPD, if known yet.
    package internal(set) var mvpd: String?
    /// `domainName` supplied when the session was created or resumed.
    package internal(set) var domainName: String?
    /// `redirectUrl` supplied when the session was created or resumed.
    package internal(set) var redirectUrl: String?
    /// Start of the code's validity window, epoch milliseconds.
    package let notBefore: Int64
    /// End of the code's validity window, epoch milliseconds.
    package internal(set) var notAfter: Int64
    /// The session's status when it was read.
    package internal(set) var status: Status

    /// The scripted outcome, if any, and when it happens (epoch ms).
    package internal(set) var script: CodeScript?
    var scriptDueAt: Int64?
    /// An end before `notAfter`, and its reason; the published window is left as issued.
    var cutoff: (at: Int64, reason: Cutoff)?

    let deviceInfo: DeviceInfo?
    let userAgent: String?
    let peerAddress: String?
    let v1Info: V1RegcodeInfo?
    /// The SSO subjects of the valid headers the session was created with; completing the code links them to the MVPD.
    var ssoSubjects: [SSOSubject] = []

    /// When the code stops being usable: `notAfter`, or an earlier cutoff.
    var effectiveEnd: Int64 { min(self.notAfter, self.cutoff?.at ?? .max) }

    /// Whether the code can still be used: pending or completed, and not past `notAfter`.
    package var isLive: Bool {
        switch self.status {
        case .pending, .completed: true
        case .expired, .superseded: false
        }
    }

    /// Parameters a resume call may still need (Adobe spells `domainName` as `domain` here).
    var missingParameters: [String] {
        var missing: [String] = []
        if self.mvpd == nil { missing.append("mvpd") }
        if self.domainName == nil { missing.append("domain") }
        if self.redirectUrl == nil { missing.append("redirectUrl") }
        return missing
    }
}
