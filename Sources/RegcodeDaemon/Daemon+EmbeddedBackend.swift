import DeviceRegistry
import RegcodeEngine

extension Daemon {
    /// The in-process backend of a configuration that names no other, built by `factory` with what it must agree
    /// with (the TV Provider's key, the fleets' v1 key pairs); nil with another backend.
    static func embeddedBackend(
        _ factory: EmbeddedBackendFactory?,
        configuration: DaemonConfiguration,
        catalog: DeviceCatalog,
        identityProvider: TVProviderIdentityProvider
    ) throws(ConfigurationError) -> (any EmbeddedBackend)? {
        guard configuration.usesEmbeddedSimulator else { return nil }
        guard let factory else {
            throw ConfigurationError(
                file: configuration.configFile,
                key: "backend",
                reason: "this program has no embedded simulator: name the Adobe Pass backend (or a pass-sim) to use"
            )
        }
        var signingKeys: [String: String] = [:]
        for secrets in catalog.secrets.values {
            if let keys = secrets.signingKeys { signingKeys[keys.publicKey] = keys.secret }
        }
        let context = EmbeddedBackendContext(
            configuration: configuration,
            tvProviderPublicKeyPEM: identityProvider.publicKeyPEM,
            signingKeys: signingKeys,
            maxConnections: DescriptorBudget(limit: OpenFileLimit.raised.after, configuration: configuration).simulator
        )
        return try factory(context)
    }

    /// The statement of fleets that name none: issued with the embedded backend's key for every fleet's `redirect_uri`;
    /// the unsigned placeholder with another backend (which must be given one, or accept unsigned statements).
    static func embeddedStatement(key: (any SoftwareStatementIssuer)?, configuration: DaemonConfiguration) -> String {
        guard let key else { return DeviceCatalog.embeddedSoftwareStatement }
        let redirectURIs = Set(configuration.fleets.map(\.identity.clientRedirectURI) + [ClientIdentity().clientRedirectURI]).sorted()
        return key.issue(redirectURIs: redirectURIs) ?? DeviceCatalog.embeddedSoftwareStatement
    }
}
