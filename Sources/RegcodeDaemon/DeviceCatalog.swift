import Foundation
import RegcodeEngine

/// Secrets of one fleet, read from files (or systemd credentials), never from the command line.
struct FleetSecrets: Sendable, Equatable {
    var softwareStatement: String?
    var signingKeys: SigningKeys?
}

/// Turns the configured fleets into per-device settings.
struct DeviceCatalog: Sendable {
    /// A structurally valid, unsigned software statement: what fleets without a statement send to a local backend
    /// other than the embedded simulator (a pass-sim started with `--accept-unsigned-statements` takes it). The
    /// embedded simulator gets one signed with its key instead (``embeddedStatement``).
    static let embeddedSoftwareStatement =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzb2Z0d2FyZV9pZCI6InJlZ2NvZGVkLWVtYmVkZGVkIiwiY2xpZW50X25hbWUiOiJyZWdjb2RlZCIsInNvZnR3YXJlX3ZlcnNpb24iOiIxIn0.c2ltdWxhdG9y"

    var fleets: [FleetConfiguration]
    var secrets: [String: FleetSecrets]
    /// The identity provider of every emulated TV Provider (the daemon's key).
    var identityProvider: TVProviderIdentityProvider?
    /// The statement of fleets on a local backend that name none.
    var embeddedStatement: String = DeviceCatalog.embeddedSoftwareStatement

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

    /// Gives `statement` to every fleet holding the unsigned lab statement (none configured, or systemd's and
    /// Kubernetes' lab credential): the embedded simulator registers no statement but the ones it signed.
    mutating func useEmbeddedStatement(_ statement: String) {
        for (name, fleetSecrets) in secrets where fleetSecrets.softwareStatement == Self.embeddedSoftwareStatement {
            secrets[name]?.softwareStatement = statement
        }
        embeddedStatement = statement
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

    func fleet(named name: String) -> FleetConfiguration? {
        fleets.first { $0.name == name }
    }

    /// The fleet a device name belongs to (`stb-3` → `stb`).
    func fleet(forDevice device: String) -> FleetConfiguration? {
        // Parsed, not searched: a 10,000-device fleet must not build its name list per lookup.
        fleets.first { fleet in
            guard device.hasPrefix(fleet.name + "-"), let index = Int(device.dropFirst(fleet.name.count + 1)) else { return false }
            return (1...max(1, fleet.count)).contains(index) && fleet.count > 0 && String(index) == device.dropFirst(fleet.name.count + 1)
        }
    }

    /// The position of a configured device among the devices of the `included` fleets (every shard's, in fleet
    /// order, from 0; all fleets by default): the offset of its client address in the list those fleets share, the
    /// same whichever shard runs it.
    func ordinal(ofDevice device: String, among included: (FleetConfiguration) -> Bool = { _ in true }) -> Int? {
        var offset = 0
        for fleet in fleets where included(fleet) {
            if device.hasPrefix(fleet.name + "-"), let index = Int(device.dropFirst(fleet.name.count + 1)), (1...max(1, fleet.count)).contains(index),
                fleet.count > 0, String(index) == device.dropFirst(fleet.name.count + 1)
            {
                return offset + index - 1
            }
            offset += max(0, fleet.count)
        }
        return nil
    }

    /// How many devices the configuration lists, every shard's.
    var configuredDeviceCount: Int { fleets.reduce(0) { $0 + max(0, $1.count) } }

    /// Settings of a device of `fleet`, secrets included (they stay in memory only).
    func settings(for name: String, fleet: FleetConfiguration) -> DeviceSettings {
        var settings = DeviceSettings(name: name, requestor: fleet.requestor)
        settings.profile = fleet.profile
        settings.presetMVPD = fleet.mvpd
        settings.loginProvider = fleet.loginProvider
        settings.tempPassEmail = fleet.tempPassEmail
        settings.polling = fleet.poll
        settings.identity = fleet.identity
        settings.tvProvider = fleet.tvProvider
        settings.tvProvider?.identityProvider = identityProvider
        if !fleet.apps.isEmpty {
            settings.sso = fleet.sso ?? DeviceSSOSettings()
            settings.apps = fleet.apps
            settings.requestor = fleet.apps[0].requestor ?? fleet.requestor
            settings.deviceInfo.osName = settings.sso?.platform.family == .ios ? "iOS" : "tvOS"
            settings.deviceInfo.osFamily = settings.deviceInfo.osName
            settings.deviceInfo.osVersion = settings.sso?.platform.osVersion.description ?? settings.deviceInfo.osVersion
        }
        settings.ssoIdentity = fleet.ssoIdentity
        settings.connections = fleet.connections.model(fleet: fleet.name)
        settings.clientAddressMode = fleet.clientAddress.mode ?? .host
        let secrets = secrets[fleet.name] ?? FleetSecrets()
        settings.softwareStatement = secrets.softwareStatement
        settings.signingKeys = secrets.signingKeys
        return settings
    }
}
