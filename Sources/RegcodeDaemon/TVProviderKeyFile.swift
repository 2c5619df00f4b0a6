import Foundation
import Logging
import RegcodeEngine

/// The key of the emulated TV Provider's identity provider (Apple single sign-on). A daemon whose fleets emulate a
/// TV Provider keeps it beside the database, so a restart signs with the same key and a separately started pass-sim
/// can be handed the public key once (`pass-sim --tv-provider-idp-key x.tv-provider-idp.pem`). Without such a fleet
/// the key lives in memory only (the embedded simulator still trusts it).
enum TVProviderKeyFile {
    static func identityProvider(_ configuration: DaemonConfiguration, logger: Logger) throws(ConfigurationError) -> TVProviderIdentityProvider {
        guard configuration.fleets.contains(where: { $0.tvProvider != nil }) else { return TVProviderIdentityProvider() }
        let keyPath = configuration.tvProviderIdentityProviderKeyPath
        let publicPath = configuration.tvProviderIdentityProviderPublicKeyPath
        let identityProvider: TVProviderIdentityProvider
        if FileManager.default.fileExists(atPath: keyPath) {
            switch ConfigurationFile.readRegularFile(keyPath) {
            case .success(let pem):
                do {
                    identityProvider = try TVProviderIdentityProvider(privateKeyPEM: pem)
                } catch {
                    throw ConfigurationError(file: keyPath, key: "(file)", reason: "not a P-256 private key in PEM: \(error)")
                }
            case .failure(let problem):
                throw ConfigurationError(file: keyPath, key: "(file)", reason: problem.reason)
            }
        } else {
            identityProvider = TVProviderIdentityProvider()
            guard
                FileManager.default.createFile(
                    atPath: keyPath,
                    contents: Data(identityProvider.privateKeyPEM.utf8),
                    attributes: [.posixPermissions: 0o600]
                )
            else {
                throw ConfigurationError(file: keyPath, key: "(file)", reason: "cannot write the TV Provider identity provider key")
            }
            logger.notice("TV Provider identity provider key created", metadata: ["path": "\(keyPath)"])
        }
        // Rewritten every start, so it always matches the key.
        do {
            try Data(identityProvider.publicKeyPEM.utf8).write(to: URL(fileURLWithPath: publicPath), options: .atomic)
        } catch {
            throw ConfigurationError(file: publicPath, key: "(file)", reason: "cannot write the TV Provider identity provider's public key: \(error)")
        }
        return identityProvider
    }
}
