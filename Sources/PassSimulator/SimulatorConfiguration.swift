#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An MVPD (TV provider) the simulator offers in its configuration and accepts in sessions.
@dynamicMemberLookup
package struct SimulatedMVPD: Sendable, Hashable, Codable {
    /// The MVPD identifier used in requests (`mvpd=Cablevision`).
    package var id: String
    /// The human-readable name shown in pickers.
    package var displayName: String
    /// Logo URL published in `GET /api/v2/{sp}/configuration`; `nil` serves a generated badge from the simulator.
    package var logoUrl: String?
    /// Whether the MVPD authenticates per aggregator (published as is; no behaviour attached).
    package var authPerAggregator: Bool
    /// The platform (partner SSO) fields, read and written as members of the MVPD (`mvpd.boardingStatus`).
    package var platform: MVPDPlatform

    /// An MVPD with identifier `id` shown as `displayName`, with the platform fields of `platform`.
    package init(
        id: String,
        displayName: String,
        logoUrl: String? = nil,
        authPerAggregator: Bool = false,
        platform: MVPDPlatform = .init()
    ) {
        self.id = id
        self.displayName = displayName
        self.logoUrl = logoUrl
        self.authPerAggregator = authPerAggregator
        self.platform = platform
    }

    private enum CodingKeys: String, CodingKey {
        case id, displayName, logoUrl, authPerAggregator
    }

    /// Decodes `id`, `displayName`, optional `logoUrl` and `authPerAggregator`, and the platform fields (all optional).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            displayName: try container.decode(String.self, forKey: .displayName),
            logoUrl: try container.decodeIfPresent(String.self, forKey: .logoUrl),
            authPerAggregator: try container.decodeIfPresent(Bool.self, forKey: .authPerAggregator) ?? false,
            platform: try MVPDPlatform(from: decoder)
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.displayName, forKey: .displayName)
        try container.encodeIfPresent(self.logoUrl, forKey: .logoUrl)
        try container.encode(self.authPerAggregator, forKey: .authPerAggregator)
        try self.platform.encode(to: encoder)
    }

    /// A platform field, as a member of the MVPD.
    package subscript<Value>(dynamicMember field: WritableKeyPath<MVPDPlatform, Value>) -> Value {
        get { platform[keyPath: field] }
        set { platform[keyPath: field] = newValue }
    }

    /// The MVPDs offered when none are configured: `Comcast_SSO` is onboarded for Apple SSO (`SUPPORTED`), `Spectrum`
    /// only appears in Apple's picker (`PICKER`), the others have no platform fields.
    package static let defaults: [SimulatedMVPD] = [
        SimulatedMVPD(id: "Cablevision", displayName: "Optimum"),
        SimulatedMVPD(
            id: "Comcast_SSO",
            displayName: "Xfinity",
            platform: MVPDPlatform(
                platformMappingId: "Comcast",
                boardingStatus: .supported,
                enablePlatformServices: true,
                displayInPlatformPicker: true
            )
        ),
        SimulatedMVPD(id: "DTV", displayName: "DIRECTV"),
        SimulatedMVPD(
            id: "Spectrum",
            displayName: "Spectrum",
            platform: MVPDPlatform(
                platformMappingId: "Spectrum",
                boardingStatus: .picker,
                enablePlatformServices: true,
                displayInPlatformPicker: true
            )
        ),
        SimulatedMVPD(id: "Verizon", displayName: "Verizon Fios"),
    ]
}

/// The simulator's source of wall-clock time, in milliseconds since the Unix epoch.
///
/// Every expiry (codes, tokens, profiles, throttle refill) reads this clock and every injected latency waits on it,
/// so tests can build one from a manual clock and move time instead of sleeping.
package struct SimulatorClock: Sendable {
    private let read: @Sendable () -> Int64
    private let pause: @Sendable (Duration) async throws -> Void

    /// A clock reading `nowMillis` each time the simulator needs the current time; injected latency really sleeps.
    package init(nowMillis: @escaping @Sendable () -> Int64) {
        self.init(nowMillis: nowMillis, sleep: { try await Task.sleep(for: $0) })
    }

    /// A clock reading `nowMillis`, whose waits (injected latency) go through `sleep`.
    package init(nowMillis: @escaping @Sendable () -> Int64, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.read = nowMillis
        self.pause = sleep
    }

    /// The current time in epoch milliseconds.
    package var nowMillis: Int64 { self.read() }

    /// Waits `duration` on this clock (used for injected latency).
    package func sleep(for duration: Duration) async throws {
        try await self.pause(duration)
    }

    /// The system wall clock.
    package static var system: SimulatorClock {
        SimulatorClock { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    }
}

/// What the throttle's token buckets are keyed by (reference §8.2).
package enum ThrottleKey: String, Sendable, CaseIterable, Codable {
    /// The client address (``SimulatorConfiguration/trustForwardedFor``): how Adobe identifies a device.
    case ip
    /// `AP-Device-Identifier` (DCR, v2) or the v1 `deviceId` parameter, falling back to the address.
    case device
}

/// Everything that shapes the simulator's behaviour.
package struct SimulatorConfiguration: Sendable {
    /// How long an authentication (registration) code stays valid (`notAfter - notBefore`); a v1 device may ask for
    /// another `ttl` (up to Adobe's 36000 s).
    package var codeTTL: Duration = .seconds(1800)
    /// When set, a pending code completes by itself this long after it was issued, as if a user had logged in.
    /// A code with a script (``defaultCodeScript`` or `PUT /_sim/codes/{code}/script`) follows its script instead.
    package var autoApproveAfter: Duration?
    /// Whether the token bucket of `/o/client/*`, `/api/v2/*` and the v1 device paths (reference §8.2) is enforced.
    package var throttleEnabled: Bool = true
    /// What a throttle bucket is keyed by: the client address (Adobe's keying) or the device.
    package var throttleKey: ThrottleKey = .ip
    /// Requests a client may make beyond the rate (Adobe's burst of 10): a new client gets `throttleBurst + 1` at once
    /// (see ``Throttle``).
    package var throttleBurst: Int = 10
    /// Requests per second a client may make in the long run (Adobe's 1).
    package var throttleRatePerSecond: Double = 1
    /// Whether a request's client address (throttle key, sessions' peer address) is the first `X-Forwarded-For`
    /// address, as behind a trusted proxy; false: the TCP peer's, whatever the header says.
    package var trustForwardedFor: Bool = false
    /// Lifetime of DCR access tokens (`expires_in`).
    package var accessTokenTTL: Duration = .seconds(21_600)
    /// Lifetime of authenticated profiles.
    package var profileTTL: Duration = .seconds(30 * 24 * 3600)
    /// MVPDs offered and accepted.
    package var mvpds: [SimulatedMVPD] = SimulatedMVPD.defaults
    /// Service providers (requestor ids) known to the simulator; others are answered 400
    /// `invalid_parameter_service_provider`. `nil`, or ``lenient``, accepts any id made of `[A-Za-z0-9_.-]`.
    package var serviceProviders: Set<String>? = ["REF30"]
    /// The MVPDs integrated with each service provider; a session, decision, profile or logout naming an MVPD that is
    /// not integrated with the service provider is answered 400 `invalid_integration` (unless ``lenient``). `nil`
    /// integrates every configured MVPD with every service provider; a service provider missing from the map has no
    /// integration.
    package var integrations: [String: Set<String>]?
    /// Approved software statements: `software_id` → the service providers the statement was issued for (empty:
    /// every service provider). Registering with another `software_id` is answered 400
    /// `unapproved_software_statement`, and an access token used for a service provider its statement does not cover
    /// is answered 401 `invalid_access_token_service_provider` (unless ``lenient``). By default the statement
    /// regcoded embeds and the sample statement of Adobe's DCR documentation are approved for every service provider.
    package var approvedSoftwareStatements: [String: Set<String>] = Self.defaultApprovedSoftwareStatements
    /// The key software statements are signed with (RS256, standing in for Adobe's): a statement it does not verify is
    /// refused 400 `invalid_software_statement`, and one it verifies is approved for every service provider (issuing
    /// it is the approval) unless ``approvedSoftwareStatements`` narrows its `software_id`. By default a key generated
    /// on first use; `pass-sim` keeps it in a file (`--statement-key`, or beside `--state`).
    package var statementKey: SoftwareStatementKey = .ephemeral()
    /// Accepts software statements whatever their signature, checking only their structure, their approval
    /// (``approvedSoftwareStatements``) and their `redirect_uris` when they list any: set-ups made before statements
    /// were verified keep working. Implied by ``lenient``.
    package var acceptUnsignedStatements: Bool = false
    /// Relaxes the checks Adobe makes and the simulator enforces by default: unknown service providers, MVPDs not
    /// integrated, unapproved software statements, tokens used outside their statement's service providers, missing
    /// or wrong `Content-Type` (DCR register, DCR token, v2 sessions, decisions) and missing `X-Device-Info` (DCR,
    /// v2 sessions, profiles, decisions, logout).
    package var lenient: Bool = false
    /// SQLite file the simulator keeps its durable state in (clients, access tokens, codes, profiles, v1 tokens and
    /// authorizations, deny lists), loaded again at start; `nil` keeps everything in memory only.
    package var statePath: String?
    /// Domains every service provider lists (published by the configuration endpoint); a session's `domainName` must
    /// be one of them or a subdomain of one (else 400 `invalid_parameter_domain_name`, unless ``lenient``). The
    /// default covers regcoded's `domainName` and Adobe's samples.
    package var domains: [String] = ["adobe.com"]
    /// Domains of particular service providers, replacing ``domains`` for them.
    package var requestorDomains: [String: [String]] = [:]
    /// Source of the current time.
    package var clock: SimulatorClock = .system
    /// Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN, optionally mutual TLS) instead of plain HTTP/1.1; `nil`: plain.
    package var tls: SimulatorTLS?
    /// Connections the listener holds at once; past it a new one is accepted, closed at once and counted
    /// (`listener.refused` in `/_sim/stats`). nil: the open-file limit less a quarter of it (at most 1024) kept back.
    package var maxConnections: Int?
    /// A connection with no request in progress is closed after this long without traffic; nil never.
    package var idleTimeout: Duration? = .seconds(60)
    /// An HTTP/1.1 request's head and body must arrive whole within this long of its first byte; nil never.
    package var readTimeout: Duration? = .seconds(10)

    /// SSO settings of requestor × MVPD integrations, by service provider then MVPD; a pair missing here has the
    /// defaults (enabled, every SSO method on, the simulator's profile TTL). Replaceable at runtime through
    /// `PUT /_sim/integrations/{sp}/{mvpd}`.
    package var integrationSettings: [String: [String: IntegrationSettings]] = [:]
    /// Identity services whose tokens are accepted besides the simulator's own (`/_sim/identity/*`), by `iss`.
    package var identityIssuers: [String: IdentityIssuer] = [:]
    /// The MVPD identity providers whose SAML answers partner SSO believes.
    package var samlTrust = SAMLTrust()
    /// What basic v2 profiles are bound to; ``V2ProfileScope/deviceAndClient`` is Adobe's behaviour.
    package var v2ProfileScope: V2ProfileScope = .deviceAndClient
    /// Whether decisions for an `appleSSO` profile need an `AP-Partner-Framework-Status` header. Adobe documents the
    /// header as accepted there but not as required (INFERRED, sso.md §3.3); a header that is sent is validated
    /// either way.
    package var requirePFSForAppleSSODecisions: Bool = false
    /// Lifetimes and answer field names of Adobe's SSO Service (`/api/{sp}/serviceToken`, `link`, `unlink`, `list`).
    package var ssoService = SSOServiceSettings()

    /// Resources whose authorization is denied, with the MVPD's `details` text (empty text: a generated message).
    package var denyResources: [String: String] = [:]
    /// MVPDs that deny every resource, with the `details` text (empty text: a generated message).
    package var denyMVPDs: [String: String] = [:]
    /// TempPass MVPDs, degradation rules, home networks and item errors (`--entitlements`); replaceable at runtime
    /// through `PUT /_sim/entitlements`.
    package var entitlements: EntitlementSettings = .init()
    /// How decisions answer a device without a valid profile for the MVPD: 403 `authenticated_profile_missing` (or
    /// `…_expired`) as the whole body, or each decision denied with it (Adobe's documents allow both readings).
    package var missingProfileDecision: MissingProfileDecision = .topLevel
    /// Most resources one preauthorize call may name; more is answered 403 `too_many_resources`.
    package var preauthorizeResourceLimit: Int = 5
    /// Lifetime of authorization decisions and v1 AuthZ tokens.
    package var authorizationTTL: Duration = .seconds(24 * 3600)
    /// Lifetime of short media tokens (Adobe: about 7 minutes).
    package var mediaTokenTTL: Duration = .seconds(420)

    /// Legacy v1 signing keys, public key → secret, for the HMAC-SHA1 `Authorization` header (reference §3.1).
    package var signingKeys: [String: String] = [Self.labSigningKey.publicKey: Self.labSigningKey.secret]
    /// How far a signed header's `request_time` may be from the simulator's clock, either way.
    package var signatureWindow: Duration = .seconds(600)

    /// Fault injection (errors, throttling, drops, latency, early expiry), replaceable at runtime via `PUT /_sim/faults`.
    package var faults: FaultConfiguration = .init()
    /// Seed of the fault-injection random generator; `nil` seeds from the system. Codes and secrets stay random.
    package var faultSeed: UInt64?
    /// The OAuth 2.0 Device Authorization Grant (RFC 8628): provider imitated, clients, lifetimes. Its codes follow
    /// ``autoApproveAfter`` and ``defaultCodeScript`` as Adobe codes do.
    package var oauth = OAuthServerSettings()
    /// Scripted outcome given to every new code (`approve` after a delay, `deny`, `never`); `nil` leaves codes to
    /// the user, the admin API or ``autoApproveAfter``.
    package var defaultCodeScript: CodeScript?

    /// The synthetic key pair of reference §3.1 (not a real Adobe key), accepted by default so lab devices can sign.
    package static let labSigningKey = (publicKey: "samplePublicKey", secret: "sampleSecretKey")

    /// `software_id` of the software statement regcoded embeds.
    package static let embeddedSoftwareId = "regcoded-embedded"
    /// `software_id` of the sample statement in Adobe's DCR documentation (reference §6.1).
    package static let documentationSoftwareId = "4NRB1-0XZABZI9E6-5SM3R"
    /// The statements approved by default, each for every service provider.
    package static let defaultApprovedSoftwareStatements: [String: Set<String>] = [
        Self.embeddedSoftwareId: [], Self.documentationSoftwareId: [],
    ]

    /// The defaults: 30-minute codes, 6-hour access tokens, 30-day profiles, throttling on (1/s with a burst of 10), no faults.
    package init() {}

    /// The configured MVPD with identifier `id`, if any.
    package func mvpd(id: String) -> SimulatedMVPD? {
        self.mvpds.first { $0.id == id }
    }

    /// Whether `mvpd` is integrated with `serviceProvider` (always, when ``lenient`` or without ``integrations``).
    package func integrates(serviceProvider: String, mvpd: String) -> Bool {
        guard !self.lenient, let integrations = self.integrations else { return true }
        return integrations[serviceProvider]?.contains(mvpd) == true
    }

    /// The configured MVPDs integrated with `serviceProvider`, in configuration order.
    package func mvpds(integratedWith serviceProvider: String) -> [SimulatedMVPD] {
        self.mvpds.filter { self.integrates(serviceProvider: serviceProvider, mvpd: $0.id) }
    }

    /// Whether a client registered with `softwareId` may call APIs of `serviceProvider` (always, when ``lenient``).
    package func softwareStatement(_ softwareId: String, covers serviceProvider: String) -> Bool {
        guard !self.lenient else { return true }
        // A client exists only if its statement was approved at registration: one the simulator signed, not narrowed
        // here, covers every service provider.
        guard let requestors = self.approvedSoftwareStatements[softwareId] else { return true }
        return requestors.isEmpty || requestors.contains(serviceProvider)
    }

    /// Whether registering with `softwareId` is allowed: always for a statement the simulator signed (`signed`) or
    /// when ``lenient``, else when the `software_id` is approved.
    package func approves(softwareId: String, signed: Bool) -> Bool {
        self.lenient || signed || self.approvedSoftwareStatements[softwareId] != nil
    }

    /// The domains `serviceProvider` lists.
    package func domains(of serviceProvider: String) -> [String] {
        self.requestorDomains[serviceProvider] ?? self.domains
    }

    /// Whether `domainName` is a domain `serviceProvider` lists, or a subdomain of one (always, when ``lenient``).
    package func lists(domainName: String, for serviceProvider: String) -> Bool {
        guard !self.lenient else { return true }
        let name = domainName.lowercased()
        return self.domains(of: serviceProvider).contains { listed in
            let domain = listed.lowercased()
            return name == domain || name.hasSuffix("." + domain)
        }
    }

    /// Whether `serviceProvider` is acceptable as the `{serviceProvider}` path segment.
    package func accepts(serviceProvider: String) -> Bool {
        if let allowed = self.serviceProviders, !self.lenient {
            return allowed.contains(serviceProvider)
        }
        return !serviceProvider.isEmpty
            && serviceProvider.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }
}

extension Duration {
    /// Whole milliseconds, truncated.
    var milliseconds: Int64 {
        let parts = self.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
