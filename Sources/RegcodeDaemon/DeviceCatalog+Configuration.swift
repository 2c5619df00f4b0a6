import DeviceRegistry
import Foundation
import RegcodeEngine

extension DeviceCatalog {
    /// Reads every fleet's secret files; `CREDENTIALS_DIRECTORY` supplies `software-statement`
    /// and `signing-secret` when the config names none. Fleets on a local backend without either, or with the
    /// unsigned lab statement, use `embeddedStatement`.
    static func load(
        configuration: DaemonConfiguration,
        environment: [String: String],
        embeddedStatement: String = DeviceCatalog.embeddedSoftwareStatement
    ) throws(ConfigurationError) -> DeviceCatalog {
        let credentials = environment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        var secrets: [String: FleetSecrets] = [:]
        for (index, fleet) in configuration.fleets.enumerated() {
            var fleetSecrets = FleetSecrets()
            if fleet.deviceProtocol == .oauthDevice {
                // An OAuth device has no DCR statement nor Adobe signing key: its secrets are its client's.
                let oauth = fleet.oauth
                if let file = oauth.clientSecretFile {
                    fleetSecrets.oauthClientSecret = try readSecret(
                        file,
                        key: "fleets[\(index)].oauth.client_secret_file",
                        configFile: configuration.configFile
                    )
                } else if let credentials, let value = try? readSecret("\(credentials)/oauth-client-secret", key: "", configFile: nil) {
                    fleetSecrets.oauthClientSecret = value
                }
                if let file = oauth.privateKeyFile {
                    fleetSecrets.oauthPrivateKey = try readSecret(
                        file,
                        key: "fleets[\(index)].oauth.private_key_file",
                        configFile: configuration.configFile
                    )
                }
                secrets[fleet.name] = fleetSecrets
                continue
            }
            if let file = fleet.softwareStatementFile {
                fleetSecrets.softwareStatement = try readSecret(
                    file,
                    key: "fleets[\(index)].software_statement_file",
                    configFile: configuration.configFile
                )
            } else if let credentials, let value = try? readSecret("\(credentials)/software-statement", key: "", configFile: nil) {
                fleetSecrets.softwareStatement = value
            } else if fleet.profile == .v2 || fleet.publicKey == nil {
                guard configuration.backendIsLocal else {
                    // The embedded statement is only approved by a simulator; a real backend refuses it at registration.
                    throw ConfigurationError(
                        file: configuration.configFile,
                        key: "fleets[\(index)].software_statement_file",
                        reason: "a backend that is not on this host needs the programmer's software statement (DCR)"
                    )
                }
                fleetSecrets.softwareStatement = embeddedStatement
            }
            if let publicKey = fleet.publicKey {
                let secretFile = fleet.signingSecretFile ?? credentials.map { "\($0)/signing-secret" } ?? ""
                let secret = try readSecret(secretFile, key: "fleets[\(index)].signing_secret_file", configFile: configuration.configFile)
                fleetSecrets.signingKeys = SigningKeys(publicKey: publicKey, secret: secret)
                if fleet.profile == .v1 && fleet.softwareStatementFile == nil { fleetSecrets.softwareStatement = nil }
            }
            secrets[fleet.name] = fleetSecrets
        }
        // Each fleet's client address as it resolves against the backend (a default `bind` on loopback, else `host`).
        let fleets = configuration.fleets.map { fleet in
            var fleet = fleet
            fleet.clientAddress = ClientAddressConfiguration(
                mode: configuration.clientAddressMode(of: fleet),
                addresses: configuration.clientAddressRange(of: fleet)
            )
            return fleet
        }
        var catalog = DeviceCatalog(fleets: fleets, secrets: secrets)
        catalog.useEmbeddedStatement(embeddedStatement)
        return catalog
    }

    /// Every failure names the secret file: the configuration may not (a credential, a flag).
    private static func readSecret(_ path: String, key: String, configFile: String?) throws(ConfigurationError) -> String {
        switch ConfigurationFile.readRegularFile(path) {
        case .success(let contents):
            let text = contents.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw ConfigurationError(file: configFile, key: key, reason: "\(path) is empty") }
            return text
        case .failure(let problem):
            throw ConfigurationError(file: configFile, key: key, reason: "\(path): \(problem.reason)")
        }
    }
}
