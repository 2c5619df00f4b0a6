/// The on-device token format an AccessEnabler writes; an AccessEnabler reads only its own.
package enum TokenFormatGeneration: String, Sendable, Hashable, Codable {
    /// Pasteboard / NSUserDefaults tokens (AccessEnabler < 3.0).
    case legacy
    /// Keychain tokens of AccessEnabler 3.0 – 3.6.x.
    case v30
    /// Keychain tokens of AccessEnabler ≥ 3.7.0 (DOC `[UP370]`).
    case v37

    /// The format `accessEnabler` writes, and the only one it reads (INFERRED: 3.7.0 reaches `v30` tokens
    /// only through its first-run importer, which is not part of this layer).
    package init(accessEnabler: SemanticVersion) {
        if accessEnabler >= StoragePolicy.keychainV37From {
            self = .v37
        } else if accessEnabler >= StoragePolicy.keychainFrom {
            self = .v30
        } else {
            self = .legacy
        }
    }
}

/// An authentication token as an AccessEnabler keeps it on the device (metadata only, no token value).
package struct StoredToken: Sendable, Hashable {
    package var domain: StorageDomain
    /// The AccessEnabler device id of the app that obtained it; other ids make it unusable.
    package var boundDeviceId: String
    package var requestor: String
    package var mvpd: String
    /// Bundle id of the app that stored it (what `SEC412` looks for).
    package var creatorApp: String
    /// Expiry, epoch milliseconds; the token is expired from this instant on.
    package var notAfter: Int64
    package var formatGeneration: TokenFormatGeneration

    package init(
        domain: StorageDomain,
        boundDeviceId: String,
        requestor: String,
        mvpd: String,
        creatorApp: String,
        notAfter: Int64,
        formatGeneration: TokenFormatGeneration
    ) {
        self.domain = domain
        self.boundDeviceId = boundDeviceId
        self.requestor = requestor
        self.mvpd = mvpd
        self.creatorApp = creatorApp
        self.notAfter = notAfter
        self.formatGeneration = formatGeneration
    }

    package func isExpired(at nowMillis: Int64) -> Bool {
        nowMillis >= notAfter
    }
}
