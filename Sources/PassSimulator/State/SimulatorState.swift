#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// All mutable simulator state: DCR clients and tokens, codes (v2 sessions and v1 regcodes), v2 profiles, v1 AuthN
/// and AuthZ tokens, and the deny lists.
///
/// Keys follow reference §10: v2 profiles by (service provider, device identifier, client id); v1 tokens by
/// (requestor, deviceId); codes by code, with the creating device captured. Everything that expires is purged by a
/// sweep that runs at most once per ``sweepInterval`` of simulated time, piggybacking on requests, so memory stays
/// bounded without a timer.
///
/// Not `Sendable`: it is only reached through ``SharedSimulatorState/withLock(_:)``, which serialises every request's
/// work on it.
package final class SimulatorState {
    struct DeviceKey: Hashable, Sendable {
        let serviceProvider: String
        let deviceIdentifier: String
    }

    struct ProfileKey: Hashable, Sendable {
        let serviceProvider: String
        let deviceIdentifier: String
        let clientId: String
    }

    /// Live access tokens kept per client; older ones are revoked so a client refreshing in a loop cannot grow memory.
    static let maxTokensPerClient = 16
    /// v1 codes remembered per device; older ones are still valid but no longer observed by device polls.
    static let maxV1CodesPerDevice = 16
    /// How often (in simulated time) expired records are purged.
    static let sweepInterval: Int64 = 30_000
    /// How long expired profiles and tokens are kept, so the device is told "expired" (v1 410, v2
    /// `authenticated_profile_expired`) rather than "never authenticated".
    static let expiredRetention: Int64 = 24 * 3_600_000
    static let codeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    /// The configuration the state was created with.
    package let configuration: SimulatorConfiguration

    // The durable records: every write is reported to the journal (when there is a state file).
    var clients = TrackedMap<String, RegisteredClient> { .client($0, $1) }
    var tokens = TrackedMap<String, AccessTokenGrant> { .accessToken($0, $1) }
    var sessions = TrackedMap<String, AuthenticationSession> { .session($0, $1) }
    var profiles = TrackedMap<ProfileKey, [String: SimulatedProfile]> { .profiles($0, $1) }
    var v1Tokens = TrackedMap<DeviceKey, SimulatedProfile> { .v1Token($0, $1) }
    var v1Authorizations = TrackedMap<DeviceKey, [String: AuthorizationGrant]> { .v1Authorizations($0, $1) }
    var deny: DenyLists {
        didSet { self.journal?.record(.denyLists(self.deny)) }
    }
    // Single sign-on (sso.md §3.3): subject links, open partner requests, generated keys, and the MVPD platform fields
    // and integration settings replaced through the admin API.
    var ssoLinks = TrackedMap<SSOSubject, [String: SSOLink]> { .ssoLinks($0, $1) }
    var partnerRequests = TrackedMap<String, PartnerRequest> { .partnerRequest($0, $1) }
    var ssoSecrets = TrackedMap<SSOSecret, String> { .ssoSecret($0, $1) }
    var mvpdPlatforms = TrackedMap<String, MVPDPlatform> { .mvpdPlatform($0, $1) }
    var integrationOverrides = TrackedMap<IntegrationKey, IntegrationSettings> { .integration($0, $1) }
    // The SSO Service: enrolled devices by common identifier (then device), link codes by code.
    var ssoServiceDevices = TrackedMap<String, [String: SSOServiceDevice]> { .ssoServiceDevices($0, $1) }
    var ssoServiceLinkCodes = TrackedMap<String, SSOServiceLinkCode> { .ssoServiceLinkCode($0, $1) }
    // Entitlement variants (TempPass, degradation, home networks, item errors) and TempPass trials: memory only.
    var entitlements: EntitlementSettings
    var tempPasses = TempPassLedger()
    // The OAuth device flow's codes and tokens: memory only, bounded (``OAuthDeviceAuthority``).
    var oauth: OAuthDeviceAuthority

    // Indexes derived from the records, rebuilt when the state file is loaded.
    var tokensByClient: [String: [String]] = [:]
    var liveCodeByDevice: [DeviceKey: String] = [:]
    var v1CodesByDevice: [DeviceKey: [String]] = [:]

    var journal: StateJournal?
    var lastSweep: Int64
    var generator = SystemRandomNumberGenerator()

    /// Creates empty state governed by `configuration` (TTLs, MVPDs, deny lists, clock).
    package init(configuration: SimulatorConfiguration = .init()) {
        self.configuration = configuration
        self.deny = DenyLists(resources: configuration.denyResources, mvpds: configuration.denyMVPDs)
        self.entitlements = configuration.entitlements
        self.lastSweep = configuration.clock.nowMillis
        self.oauth = OAuthDeviceAuthority(policy: .init(configuration), now: configuration.clock.nowMillis)
    }

    var now: Int64 { self.configuration.clock.nowMillis }
}
