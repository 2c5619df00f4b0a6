/// Why an app is or is not signed in through its storage: `sso.explain`.
public struct SSOExplanation: Sendable, Equatable {
    public var app: String
    public var domain: StorageDomain
    public var rule: StorageRule
    /// False when the device's `storage.scope` override, not Adobe's or Apple's behaviour, chose the domain.
    public var faithful: Bool
    public var deviceID: String
    public var idfv: String
    public var vendorKey: String
    public var candidates: [Candidate]

    /// One token on the device and what the app's AccessEnabler made of it.
    public struct Candidate: Sendable, Equatable {
        public var token: SharedToken
        public var verdict: Verdict
    }

    public enum Verdict: Sendable, Equatable {
        /// The token the app is authenticated with.
        case used
        case ignored(TokenIgnoreReason)
        /// In another storage domain: the app cannot see it.
        case otherDomain
        /// Usable, but an earlier token was used.
        case notReached

        public var text: String {
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
    public func explain(app: Int, configuredMVPDs: Set<String>, backend: APIProfile, now: Int64) -> SSOExplanation {
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
