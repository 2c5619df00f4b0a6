/// Why an app is or is not signed in through its storage: `sso.explain`.
package struct SSOExplanation: Sendable, Equatable {
    package var app: String
    package var domain: StorageDomain
    package var rule: StorageRule
    /// False when the device's `storage.scope` override, not Adobe's or Apple's behaviour, chose the domain.
    package var faithful: Bool
    package var deviceID: String
    package var idfv: String
    package var vendorKey: String
    package var candidates: [Candidate]

    /// One token on the device and what the app's AccessEnabler made of it.
    package struct Candidate: Sendable, Equatable {
        package var token: SharedToken
        package var verdict: Verdict
    }

    package enum Verdict: Sendable, Equatable {
        /// The token the app is authenticated with.
        case used
        case ignored(TokenIgnoreReason)
        /// In another storage domain: the app cannot see it.
        case otherDomain
        /// Usable, but an earlier token was used.
        case notReached

        package var text: String {
            switch self {
            case .used: "used"
            case .ignored(let reason): reason.rawValue
            case .otherDomain: "otherDomain"
            case .notReached: "notReached"
            }
        }
    }
}

extension SSOHost {
    /// Explains the lookup `app` would make now, token by token.
    package func explain(app: Int, configuredMVPDs: Set<String>, backend: APIProfile, now: Int64) -> SSOExplanation {
        let choice = storage(of: app)
        let (result, _) = lookup(app: app, configuredMVPDs: configuredMVPDs, backend: backend, now: now)
        let ignored = Dictionary(result.ignored.map { ($0.token, $0.reason) }, uniquingKeysWith: { first, _ in first })
        let candidates = tokens.map { token -> SSOExplanation.Candidate in
            let verdict: SSOExplanation.Verdict =
                if token.metadata.domain != choice.domain { .otherDomain } else if token.metadata == result.token {
                    .used
                } else if let reason = ignored[token.metadata] { .ignored(reason) } else { .notReached }
            return SSOExplanation.Candidate(token: token, verdict: verdict)
        }
        return SSOExplanation(
            app: apps[app].id,
            domain: choice.domain,
            rule: choice.rule,
            faithful: choice.isFaithful,
            deviceID: deviceID(of: app),
            idfv: idfv(of: app),
            vendorKey: vendorKey(of: app),
            candidates: candidates
        )
    }
}
