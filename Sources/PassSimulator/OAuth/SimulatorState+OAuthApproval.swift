/// Approving an OAuth device's user code from inside the process: what `simulator.approve` does for a daemon whose
/// embedded simulator issued it (the HTTP admin API has `POST /_sim/approve` for the same).
package enum OAuthApprovalOutcome: Sendable, Equatable {
    case approved
    case unknownCode
    /// Expired, or its tokens were already issued.
    case codeGone
    /// The user already approved or denied it.
    case alreadyDecided(approved: Bool)
}

extension SimulatorState {
    /// Whether `typed` has the shape of an OAuth user code rather than an Adobe registration code.
    package static func isOAuthUserCode(_ typed: String) -> Bool {
        OAuthDeviceAuthority.isUserCode(typed)
    }

    /// Approves `userCode` as a user at the verification page would.
    package func approveOAuthUserCode(_ userCode: String) -> OAuthApprovalOutcome {
        do {
            _ = try self.oauth.approve(userCode: userCode, subject: nil, now: self.now)
            return .approved
        } catch {
            switch error {
            case .unknownCode: return .unknownCode
            case .codeGone: return .codeGone
            case .alreadyDecided(let approved): return .alreadyDecided(approved: approved)
            }
        }
    }
}
