import Foundation
import RegcodeEngine

/// Secrets of one fleet, read from files (or systemd credentials), never from the command line.
package struct FleetSecrets: Sendable, Equatable {
    package var softwareStatement: String?
    package var signingKeys: SigningKeys?
    /// An OAuth fleet's client secret and PEM private key.
    package var oauthClientSecret: String?
    package var oauthPrivateKey: String?

    package init(softwareStatement: String? = nil, signingKeys: SigningKeys? = nil) {
        self.softwareStatement = softwareStatement
        self.signingKeys = signingKeys
    }
}

/// Turns the configured fleets into per-device settings.
package struct DeviceCatalog: Sendable {
    /// A structurally valid, unsigned software statement: what fleets without a statement send to a local backend
    /// other than the embedded simulator (a pass-sim started with `--accept-unsigned-statements` takes it). The
    /// embedded simulator gets one signed with its key instead (``embeddedStatement``).
    package static let embeddedSoftwareStatement =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzb2Z0d2FyZV9pZCI6InJlZ2NvZGVkLWVtYmVkZGVkIiwiY2xpZW50X25hbWUiOiJyZWdjb2RlZCIsInNvZnR3YXJlX3ZlcnNpb24iOiIxIn0.c2ltdWxhdG9y"

    package var fleets: [FleetConfiguration]
    package var secrets: [String: FleetSecrets]
    /// The identity provider of every emulated TV Provider (the daemon's key).
    package var identityProvider: TVProviderIdentityProvider?
    /// The statement of fleets on a local backend that name none.
    package var embeddedStatement: String = DeviceCatalog.embeddedSoftwareStatement

    package init(fleets: [FleetConfiguration], secrets: [String: FleetSecrets]) {
        self.fleets = fleets
        self.secrets = secrets
    }

    /// Gives `statement` to every fleet holding the unsigned lab statement (none configured, or systemd's and
    /// Kubernetes' lab credential): the embedded simulator registers no statement but the ones it signed.
    package mutating func useEmbeddedStatement(_ statement: String) {
        for (name, fleetSecrets) in secrets where fleetSecrets.softwareStatement == Self.embeddedSoftwareStatement {
            secrets[name]?.softwareStatement = statement
        }
        embeddedStatement = statement
    }

    package func fleet(named name: String) -> FleetConfiguration? {
        fleets.first { $0.name == name }
    }

    /// The fleet a device name belongs to (`stb-3` → `stb`).
    package func fleet(forDevice device: String) -> FleetConfiguration? {
        // Parsed, not searched: a 10,000-device fleet must not build its name list per lookup.
        fleets.first { fleet in
            guard device.hasPrefix(fleet.name + "-"), let index = Int(device.dropFirst(fleet.name.count + 1)) else { return false }
            return (1...max(1, fleet.count)).contains(index) && fleet.count > 0 && String(index) == device.dropFirst(fleet.name.count + 1)
        }
    }

    /// The position of a configured device among the devices of the `included` fleets (every shard's, in fleet
    /// order, from 0; all fleets by default): the offset of its client address in the list those fleets share, the
    /// same whichever shard runs it.
    package func ordinal(ofDevice device: String, among included: (FleetConfiguration) -> Bool = { _ in true }) -> Int? {
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
    package var configuredDeviceCount: Int { fleets.reduce(0) { $0 + max(0, $1.count) } }

    /// Settings of a device of `fleet`, secrets included (they stay in memory only).
    package func settings(for name: String, fleet: FleetConfiguration) -> DeviceSettings {
        var settings = DeviceSettings(name: name, requestor: fleet.requestor)
        settings.profile = fleet.profile
        settings.persona = fleet.persona
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
        if fleet.deviceProtocol == .oauthDevice {
            var oauth = fleet.oauth.device
            oauth.clientSecret = secrets.oauthClientSecret
            oauth.privateKeyPEM = secrets.oauthPrivateKey
            settings.oauth = oauth
        }
        return settings
    }
}
