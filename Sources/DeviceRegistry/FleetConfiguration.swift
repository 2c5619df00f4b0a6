import OAuthDeviceGrant
import RegcodeEngine

/// One fleet: `count` devices named `name-1` … `name-N` sharing settings.
package struct FleetConfiguration: Sendable, Equatable {
    package var name: String = "stb"
    package var count: Int = 1
    package var requestor: String = "REF30"
    package var profile: APIProfile = .v2
    /// What kind of app the devices are: an AccessEnabler SDK app or a native REST v2 app.
    package var persona: DevicePersona = .accessEnabler
    /// How the devices log in: Adobe Pass (``profile``, ``persona``) or the OAuth device grant (``oauth``).
    package var deviceProtocol: DeviceProtocol = .adobePass
    /// The OAuth client and endpoints (`oauth:`), used when ``deviceProtocol`` is `oauth-device`.
    package var oauth = OAuthFleetSettings()
    package var mvpd: String?
    package var scenario: Scenario = .login
    /// `login: {provider:}`: which provider the login and cycle scenarios pick in the picker.
    package var loginProvider: LoginProvider = .regular
    /// `login: {temppass_email:}`: the promotional TempPass identity (`AP-TempPass-Identity`); nil: basic TempPass.
    package var tempPassEmail: String?
    /// Path of the DCR software statement (read at start and on reload).
    package var softwareStatementFile: String?
    /// v1 HMAC public key; the secret comes from `signingSecretFile`.
    package var publicKey: String?
    package var signingSecretFile: String?
    package var poll = PollPolicy()
    /// Start the fleet's devices evenly over this long instead of all at once.
    package var ramp: Duration?
    /// Timing of the `cycle` scenario.
    package var cycle = CyclePlan()
    /// Domain, redirect URLs and User-Agent.
    package var identity = ClientIdentity()
    /// Which address the backend sees the devices' calls come from (`client_address:`).
    package var clientAddress = ClientAddressConfiguration()
    /// Single sign-on: the devices' platform and storage rules (set when `device` or `apps` is configured).
    package var sso: DeviceSSOSettings?
    /// The apps each device hosts; empty: one plain app.
    package var apps: [AppConfiguration] = []
    /// Apple single sign-on: the TV Provider each device starts with; nil: not emulated.
    package var tvProvider: TVProviderDevice?
    /// REST v2 single sign-on identities (`sso_identity:`): platform identity and service token users; nil: none.
    package var ssoIdentity: SSOIdentitySettings?
    /// How the devices' calls are carried (`connections:`).
    package var connections: FleetConnections = .common

    package init() {}

    /// Names of the devices of this fleet.
    package var deviceNames: [String] {
        count > 0 ? (1...count).map { "\(name)-\($0)" } : []
    }

    /// Names of the devices of this fleet that `shard` runs (all of them without a shard).
    package func deviceNames(in shard: Shard?) -> [String] {
        guard let shard else { return deviceNames }
        return count > 0 ? (1...count).filter { shard.owns(fleet: name, member: $0) }.map { "\(name)-\($0)" } : []
    }
}

/// A fleet's connection model as configured (`connections: shared | shared N | per-device | per-request`).
package enum FleetConnections: Sendable, Equatable {
    /// The daemon's common pool, shared by every such fleet (at most `max_concurrent_requests` connections).
    case common
    /// A pool of the fleet's own with at most N keep-alive connections.
    case shared(Int)
    /// One keep-alive connection per device.
    case perDevice
    /// A new connection per call.
    case perRequest

    /// Parses the configuration's text.
    package init?(parsing text: String) {
        let words = text.lowercased().split(separator: " ", omittingEmptySubsequences: true)
        switch (words.first, words.count) {
        case ("shared", 1): self = .common
        case ("shared", 2):
            guard let count = Int(words[1]), (1...100_000).contains(count) else { return nil }
            self = .shared(count)
        case ("per-device", 1): self = .perDevice
        case ("per-request", 1): self = .perRequest
        default: return nil
        }
    }

    /// The devices' setting for a fleet named `fleet`.
    package func model(fleet: String) -> ConnectionModel? {
        switch self {
        case .common: nil
        case .shared(let count): .shared(pool: fleet, connections: count)
        case .perDevice: .perDevice
        case .perRequest: .perRequest
        }
    }
}

/// A fleet's `oauth:` section: the devices' client and endpoints, and the files holding its secrets.
package struct OAuthFleetSettings: Sendable, Equatable {
    package var device = OAuthDeviceConfiguration()
    /// File with the client secret (`client_secret_basic`, `client_secret_post`).
    package var clientSecretFile: String?
    /// File with the PEM private key (`private_key_jwt`).
    package var privateKeyFile: String?

    package init() {}

    /// How often the access token is used, when ``OAuthDeviceConfiguration/exercise`` names an endpoint.
    package var exerciseEvery: Duration {
        get { .milliseconds(device.exerciseEveryMs) }
        set { device.exerciseEveryMs = newValue.milliseconds }
    }

    package var refreshMargin: Duration {
        get { .milliseconds(device.refreshMarginMs) }
        set { device.refreshMarginMs = newValue.milliseconds }
    }
}
