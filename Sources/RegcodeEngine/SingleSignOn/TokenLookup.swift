/// Why the AccessEnabler looked at a token in its domain and did not use it.
package enum TokenIgnoreReason: String, Sendable, Hashable, Codable {
    case expired
    /// Written by another AccessEnabler storage generation.
    case unreadableFormat
    /// Bound to another device id: the seed's R2 step 3, "detects the token but does not use it".
    case deviceIdMismatch
    /// The token's MVPD is not in the list `setRequestor` configured (DOC `[OV]`).
    case mvpdNotConfigured
    /// Another requestor's token for an MVPD whose authentication is bound to the requestor.
    case otherRequestor
    /// REST v2: another app's token, whose profile the backend binds to that app's client (INFERRED,
    /// DOC `[FAQ]` 13: profiles are bound to device and client; cross-app SSO on v2 goes through the
    /// SSO methods instead).
    case boundToOtherClient
}

/// A token seen and passed over, with the first rule that excluded it.
package struct IgnoredToken: Sendable, Hashable {
    package var token: StoredToken
    package var reason: TokenIgnoreReason

    package init(token: StoredToken, reason: TokenIgnoreReason) {
        self.token = token
        self.reason = reason
    }
}

/// The answer to "is this app already authenticated?" (`checkAuthentication`, `getAuthentication`).
package enum TokenLookupResult: Sendable, Hashable {
    /// A usable token; `ignored` lists the tokens passed over before it, for diagnostics.
    case authenticated(StoredToken, ignored: [IgnoredToken])
    case notAuthenticated(ignored: [IgnoredToken])

    package var token: StoredToken? {
        if case .authenticated(let token, _) = self { token } else { nil }
    }

    package var ignored: [IgnoredToken] {
        switch self {
        case .authenticated(_, let ignored), .notAuthenticated(let ignored): ignored
        }
    }
}

extension SSORules {
    /// The AccessEnabler's local lookup (sso.md §3.1 steps 1–3 and 5); it never touches the network.
    ///
    /// Only tokens in `domain` are visible. Each is checked in order: expiry, format, device id, MVPD list,
    /// requestor; the first token passing all is used (tokens keep their stored order).
    /// Another requestor's token is usable unless its MVPD is in ``requestorBoundMVPDs`` (DOC `[SSO-SUP]`).
    /// Passive authentication for those (step 4) needs the backend and is not decided here.
    package func lookup(
        app: AppIdentity,
        domain: StorageDomain,
        deviceId: String,
        requestor: String,
        configuredMVPDs: Set<String>,
        tokens: [StoredToken],
        now nowMillis: Int64,
        usesOtherAppsTokens: Bool = true
    ) -> TokenLookupResult {
        let readable = TokenFormatGeneration(accessEnabler: app.accessEnabler)
        var ignored: [IgnoredToken] = []
        for token in tokens where token.domain == domain {
            let reason: TokenIgnoreReason? =
                if token.isExpired(at: nowMillis) { .expired } else if token.formatGeneration != readable {
                    .unreadableFormat
                } else if token.boundDeviceId != deviceId { .deviceIdMismatch } else if !usesOtherAppsTokens && token.creatorApp != app.bundleId {
                    .boundToOtherClient
                } else if !configuredMVPDs.contains(token.mvpd) {
                    .mvpdNotConfigured
                } else if token.requestor != requestor && requestorBoundMVPDs.contains(token.mvpd) { .otherRequestor } else { nil }
            guard let reason else { return .authenticated(token, ignored: ignored) }
            ignored.append(IgnoredToken(token: token, reason: reason))
        }
        return .notAuthenticated(ignored: ignored)
    }
}
