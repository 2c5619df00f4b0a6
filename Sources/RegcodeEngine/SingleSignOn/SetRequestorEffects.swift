import AccessEnablerAPI

/// Something the storage rules did that a lab should be able to see.
package enum SSODiagnostic: Sendable, Hashable {
    /// The 1.7.5 ..< 1.9 sanitizer deleted a token bound to another device id (`sso.tokenWiped`).
    case tokenWiped(StoredToken)
    /// `SEC412`: the app's own token was bound to its previous device id; the app's tokens were deleted.
    case ownTokensDeleted(deviceIdChangedFrom: String)
}

/// What `setRequestor` does to the stored tokens before `setRequestorComplete`.
package struct StorageEffects: Sendable, Equatable {
    /// Tokens to remove from storage (each at most once, in stored order).
    package var deletions: [StoredToken]
    package var diagnostics: [SSODiagnostic]
    /// An advanced-status callback to emit, if any (`SEC412`, warning).
    package var status: StatusReport?

    package init(deletions: [StoredToken] = [], diagnostics: [SSODiagnostic] = [], status: StatusReport? = nil) {
        self.deletions = deletions
        self.diagnostics = diagnostics
        self.status = status
    }

    package static let none = StorageEffects()
}

extension SSORules {
    /// The version behaviours of `setRequestor` for `app` with device id `deviceId` in `domain`.
    ///
    /// * sanitizer wipe (``sanitizerWipe``): delete every token in the domain bound to another device id,
    ///   whoever created it; no `status`, these versions predate that callback (INFERRED).
    /// * `SEC412` (≥ ``sec412From``): if a token the app itself created is bound to another device id, its own
    ///   id changed: delete all tokens the app created in the domain and warn (the "own token" test is INFERRED).
    /// * otherwise nothing: newer AccessEnablers just ignore foreign tokens at lookup.
    package func setRequestor(
        app: AppIdentity,
        domain: StorageDomain,
        deviceId: String,
        tokens: [StoredToken]
    ) -> StorageEffects {
        var remaining = tokens.filter { $0.domain == domain }
        var effects = StorageEffects()
        if sanitizerWipe.contains(app.accessEnabler) {
            let wiped = remaining.filter { $0.boundDeviceId != deviceId }
            effects.deletions += wiped
            effects.diagnostics += wiped.map(SSODiagnostic.tokenWiped)
            remaining.removeAll { $0.boundDeviceId != deviceId }
        }
        if app.accessEnabler >= sec412From,
            let stale = remaining.first(where: { $0.creatorApp == app.bundleId && $0.boundDeviceId != deviceId })
        {
            effects.deletions += remaining.filter { $0.creatorApp == app.bundleId }
            effects.diagnostics.append(.ownTokensDeleted(deviceIdChangedFrom: stale.boundDeviceId))
            effects.status = StatusReport(id: .deviceIdChanged, level: .warning, message: nil, extra: [:])
        }
        return effects
    }

    /// `logout` in an app: every token in its domain goes, whichever app or requestor stored it
    /// (DOC `[OV]`, `[SSO-SUP]`); apps in other domains keep theirs.
    package func logout(domain: StorageDomain, tokens: [StoredToken]) -> [StoredToken] {
        tokens.filter { $0.domain == domain }
    }

    /// `setSelectedProvider(null)` (cancel): deletes nothing (DOC `[OV]`).
    package func cancel(domain: StorageDomain, tokens: [StoredToken]) -> [StoredToken] {
        []
    }
}
