#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An authentication session and its code, as the simulator holds it.
public struct AuthenticationSession: Sendable {
    /// The state of a session at a given time.
    public enum Status: Sendable, Equatable {
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
    public let code: String
    /// The API that issued the code.
    public let api: CodeAPI
    /// Opaque session id (`sessionId`).
    public let sessionId: String
    /// The service provider (requestor) the code belongs to.
    public let serviceProvider: String
    /// The Base64 value of the creating device's `AP-Device-Identifier: fingerprint <value>`.
    public let deviceIdentifier: String
    /// DCR client that created the session.
    public let clientId: String
    /// Selected MVPD, if known yet.
    public internal(set) var mvpd: String?
    /// `domainName` supplied when the session was created or resumed.
    public internal(set) var domainName: String?
    /// `redirectUrl` supplied when the session was created or resumed.
    public internal(set) var redirectUrl: String?
    /// Start of the code's validity window, epoch milliseconds.
    public let notBefore: Int64
    /// End of the code's validity window, epoch milliseconds.
    public internal(set) var notAfter: Int64
    /// The session's status when it was read.
    public internal(set) var status: Status

    /// The scripted outcome, if any, and when it happens (epoch ms).
    public internal(set) var script: CodeScript?
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
    public var isLive: Bool {
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
