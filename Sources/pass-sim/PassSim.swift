import ArgumentParser
import Hummingbird
import OAuthDeviceGrant
import PassSimulator
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@main
struct PassSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pass-sim",
        abstract:
            "A simulated Adobe Pass backend (DCR, REST API v2, legacy REST API v1) with a second-screen activation page, fault injection and an admin API.",
        usage: """
            pass-sim [<options>]
            pass-sim statement --software-id <id> (--statement-key <file> | --state <path>) [--redirect-uri <uri> ...]
            """,
        discussion: """
            By default the simulator is at least as strict as Adobe;
            --lenient turns these checks off:
              - an access token works only for the requestors of its software
                statement (else 401 invalid_access_token_service_provider;
                v1: 401 Not Authorized);
              - only configured requestors are known (--requestor; else 400
                invalid_parameter_service_provider; v1: 400 Bad Request);
              - an MVPD must be integrated with the requestor (--integration;
                else 400 invalid_integration; v1: 400 Bad Request; the
                second-screen pages show an error);
              - registration needs a software statement signed with the
                simulator's statement key (else 400 invalid_software_statement;
                --accept-unsigned-statements checks only its structure and an
                approved software_id, --software-statement, else 400
                unapproved_software_statement) and a redirect_uri the statement
                lists (else 400 invalid_redirect_uri);
              - v2 sessions: a domainName the requestor lists, or a subdomain
                of one (else 400 invalid_parameter_domain_name), and an absolute
                redirectUrl (else 400 invalid_parameter_redirect_url); a session
                lacking mvpd, domainName or redirectUrl is answered resume with
                missingParameters, and its code authenticates only once resumed;
              - v1 config needs the DCR bearer token or the signed header
                (else 401 Not Authorized);
              - the documented Content-Type: DCR register application/json and
                DCR token application/x-www-form-urlencoded (else 400
                invalid_request); v2 sessions create and resume
                application/x-www-form-urlencoded and decisions
                application/json (else 415 unsupported_media_type);
              - X-Device-Info present and Base64 on DCR register and token
                (else 400 invalid_request) and on v2 sessions create,
                profiles, profiles/{mvpd}, decisions and logout (else 400
                invalid_header_device_info).
            Errors use Adobe's bodies: enhanced errors (v2), {"error": …} (DCR),
            the classic body (v1).

            Throttling is Adobe's limit (1 request per second with a burst of
            10: 11 at once, as Adobe's scenario table counts) on every
            path Adobe throttles, DCR included, keyed by the connection's
            (peer) address; with --trust-forwarded-for (a proxy in front, as
            at a proxy-facing edge) by the first X-Forwarded-For address
            instead (--throttle-key device keys it by device). GET
            /_sim/stats counts the distinct peer addresses seen.

            With --state FILE, clients, access tokens, codes, profiles, v1 tokens
            and authorizations and the deny lists are kept in that SQLite file
            and loaded again at start; an answer is sent only once what it
            reports is written. A file that is not pass-sim's is refused and
            left untouched.

            Single sign-on (REST v2): Apple partner SSO (sessions/sso/Apple,
            profiles/sso/Apple, the MVPD from AP-Partner-Framework-Status; the
            SAML answer must be signed by the MVPD identity provider key given
            with --tv-provider-idp-key or per MVPD in --sso-config
            samlIdentityProviders, e.g. regcoded's x.tv-provider-idp.pem
            beside its database), platform identity
            (Adobe-Subject-Token, X-Roku-Reserved-Roku-Connect-Token) and
            service tokens (AD-Service-Token). Tokens come from
            POST /_sim/identity/platform-token and /_sim/identity/service-token
            or from the identityIssuers of --sso-config; a missing or invalid
            header is ignored, never an error. GET /_sim/sso shows the SSO state.
            Adobe's SSO Service: POST/GET /api/{sp}/serviceToken (X-SSO-ID or
            X-SSO-LINK; refresh with AD-Service-Token), POST /api/{sp}/link (a
            6-digit one-time link code), POST /api/{sp}/unlink, GET
            /api/{sp}/list; its tokens are single sign-on in AD-Service-Token
            on the devices enrolled under their common id. GET
            /_sim/sso/service lists the devices and pending link codes; the
            ssoService section of --sso-config sets lifetimes and field names.

            Entitlement variants (REST v2, --entitlements or PUT
            /_sim/entitlements): TempPass and promotional TempPass MVPDs
            (isTempPass, temporary profiles, temporary_access_* when spent;
            reset at DELETE /reset-tempass/v3/reset as Adobe's API, or
            DELETE /_sim/temppass), degradation rules per requestor x MVPD
            (AuthNAll, AuthZAll, AuthZNone), home-based authentication per
            MVPD (hba_status from the device address, out of home:
            authorization_denied_by_hba_policies), and item errors per
            resource or MVPD (parental controls, network_*).
            Software statements: the simulator signs and checks them with an RSA
            key kept in --statement-key FILE, else beside --state FILE (its name
            without .sqlite, then .statement-key.pem), else made for this run
            only; the file is created once and kept. `pass-sim statement
            --software-id ID --statement-key FILE` prints one, and
            POST /_sim/statements {"software_id": …, "redirect_uris"?: […]}
            issues one.

            REST API v1 is past Adobe's end of support (2025-12-31) and ends at the
            end of 2026; the AccessEnabler SDKs lost support on 2026-05-31 and end
            at the same time.

            OAuth 2.0 device flow (RFC 8628), beside Adobe's APIs: discovery at
            /.well-known/oauth-authorization-server and
            /.well-known/openid-configuration, then device authorization, token
            (device code and refresh_token, rotating refresh tokens),
            revocation, introspection and userinfo at the paths of the provider
            imitated (--oauth-provider; generic: /device_authorization, /token,
            /revoke, /introspect, /userinfo). The user types the code at /device;
            POST /_sim/approve {"code": "XXXX-XXXX"} approves,
            POST /_sim/oauth/deny denies, GET /_sim/oauth/codes lists them;
            --auto-approve-after and --script apply as to Adobe codes. On its
            defaults one public client, regcoded-tv, is known; --oauth-config
            registers others (client_secret_basic, client_secret_post,
            private_key_jwt with a P-256 or RSA public key).

            HTTPS: --tls-cert/--tls-key serve a certificate you have;
            --tls-self-signed DIR keeps a lab CA and a certificate for
            localhost, 127.0.0.1, ::1 and the --listen host in DIR (the CA is
            reused, so clients set tls.ca_file: DIR/ca.pem once). HTTP/2 and
            HTTP/1.1 are offered by ALPN (--no-http2: HTTP/1.1 only);
            --tls-client-ca requires client certificates (mutual TLS).
            GET /_sim/stats counts connections by wire.
            """,
        version: RegcodeVersion.current,
        subcommands: [StatementCommand.self]
    )

    @Option(name: .long, help: ArgumentHelp("SQLite file keeping the simulator's state across restarts (created with mode 0600).", valueName: "path"))
    var state: String?

    @Flag(name: .long, help: "Relax the checks Adobe makes (see above): any requestor, MVPD, software statement, Content-Type, X-Device-Info.")
    var lenient = false

    @Option(
        name: .customLong("requestor"),
        help: ArgumentHelp("A known requestor (service provider) id; repeatable; replaces the default REF30.", valueName: "id")
    )
    var requestors: [String] = []

    @Flag(name: .long, help: "Know every well-formed requestor id, not only the --requestor ones.")
    var anyRequestor = false

    @Option(
        name: .customLong("integration"),
        help: ArgumentHelp(
            "Integrate MVPDs with a requestor (repeatable); with any --integration, only the listed pairs are integrated (default: every MVPD with every requestor).",
            valueName: "requestor=mvpd[,mvpd…]"
        )
    )
    var integrations: [Integration] = []

    @Option(
        name: .customLong("software-statement"),
        help: ArgumentHelp(
            "Approve a software_id, optionally only for some requestors (repeatable; regcoded's embedded statement and Adobe's documentation sample are always approved).",
            valueName: "software_id[=requestor,…]"
        )
    )
    var softwareStatements: [ApprovedStatement] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "RSA key file software statements are signed and checked with (created once, mode 0600; default: beside --state, else one per run).",
            valueName: "file"
        )
    )
    var statementKey: String?

    @Flag(name: .long, help: "Accept software statements not signed with the statement key (old set-ups); said in the log at start.")
    var acceptUnsignedStatements = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the rate limit is keyed by: the client address (the peer; X-Forwarded-For with --trust-forwarded-for), or the device.",
            valueName: "ip|device"
        )
    )
    var throttleKey = ThrottleKeyOption(.ip)

    @Flag(
        name: .long,
        help:
            "Take a request's client address from the first X-Forwarded-For address (the throttle, the sessions' peer address), as behind a trusted proxy; without it the header is ignored and the peer address counts."
    )
    var trustForwardedFor = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON file with the SSO sections: mvpds (with platform fields), integrations (SSO settings per requestor×MVPD), identityIssuers, ssoService (the SSO Service's lifetimes and field names).",
            valueName: "path"
        )
    )
    var ssoConfig: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON file with the entitlement variants (the shape of PUT /_sim/entitlements): tempPass, degradation, homeNetworks, itemErrors.",
            valueName: "path"
        )
    )
    var entitlements: String?

    @Option(
        name: .customLong("v2-profile-scope"),
        help: ArgumentHelp(
            "What basic v2 profiles are bound to: device+client (Adobe) or device (every app of a device shares them; not faithful).",
            valueName: "device+client|device"
        )
    )
    var v2ProfileScope: ProfileScopeOption = ProfileScopeOption(.deviceAndClient)

    @Flag(name: .long, help: "Require AP-Partner-Framework-Status on decisions for appleSSO profiles (Adobe only documents it as accepted).")
    var requirePfsOnDecisions = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How decisions answer a device without a valid profile: 403 authenticated_profile_missing as the whole body, or every decision denied with it (Adobe's documents allow both).",
            valueName: "top-level|item-level"
        )
    )
    var missingProfileDecisions = MissingProfileOption(.topLevel)

    @Option(
        name: .customLong("tv-provider-idp-key"),
        help: ArgumentHelp(
            "PEM public key or certificate (P-256) of the MVPD identity provider that signs Apple SSO SAML answers, for every MVPD without its own (regcoded writes x.tv-provider-idp.pem beside its database).",
            valueName: "file"
        )
    )
    var tvProviderIdpKey: String?

    @Flag(name: .long, help: "Accept Apple SSO SAML answers not signed by a trusted identity provider (setups from before signed answers; logged).")
    var acceptUnsignedSaml = false

    @Option(name: .long, help: ArgumentHelp("Address to listen on.", valueName: "host:port"))
    var listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080)

    @Option(name: .long, help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (needs --tls-key).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Serve HTTPS with a lab CA and certificate kept in this directory; clients trust DIR/ca.pem.", valueName: "dir")
    )
    var tlsSelfSigned: String?

    @Option(name: .long, help: ArgumentHelp("Require client certificates issued by a CA in this PEM file (mutual TLS).", valueName: "file"))
    var tlsClientCa: String?

    @Flag(name: .long, help: "Offer only HTTP/1.1 over TLS, not HTTP/2.")
    var noHttp2 = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Connections held at once; past it a new one is accepted, closed at once and counted (default: the open-file limit less a quarter, at most 1024, kept back).",
            valueName: "count"
        )
    )
    var maxConnections: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Close a connection with no request in progress after this long without traffic (0: never).", valueName: "seconds")
    )
    var idleTimeout: Seconds = Seconds(60)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Close a connection whose HTTP/1.1 request head and body have not arrived this long after they began (0: never).",
            valueName: "seconds"
        )
    )
    var readTimeout: Seconds = Seconds(10)

    @Option(name: .long, help: ArgumentHelp("Complete every code automatically this many seconds after it was issued.", valueName: "seconds"))
    var autoApproveAfter: Seconds?

    @Option(name: .long, help: ArgumentHelp("Lifetime of authentication codes.", valueName: "seconds"))
    var codeTtl: Seconds = Seconds(1800)

    @Flag(name: .long, help: "Disable the rate limit (1 request per second with a burst of 10).")
    var noThrottle = false

    @Option(name: .long, help: ArgumentHelp("Log level.", valueName: "level"))
    var logLevel: LogLevel = LogLevel(.info)

    @Option(
        name: .customLong("signing-key"),
        help: ArgumentHelp(
            "Accept v1 requests signed with this key pair (repeatable; the lab pair samplePublicKey:sampleSecretKey is always accepted).",
            valueName: "public:secret"
        )
    )
    var signingKeys: [SigningKey] = []

    @Option(
        name: .customLong("deny-resource"),
        help: ArgumentHelp("Deny authorization of a resource, with an optional details text (repeatable).", valueName: "resource[=details]")
    )
    var denyResources: [Denial] = []

    @Option(
        name: .customLong("deny-mvpd"),
        help: ArgumentHelp("Deny every resource to users of an MVPD, with an optional details text (repeatable).", valueName: "mvpd[=details]")
    )
    var denyMVPDs: [Denial] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Script every new code: approve after SECONDS, deny after SECONDS, or never complete.",
            valueName: "approve[:s]|deny[:s]|never"
        )
    )
    var script: Script?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JSON fault configuration, the shape PUT /_sim/faults takes: \"default\" (or \"all\") and the classes dcr, sessions, poll, decisions, config, other; the --fault-* flags override its default.",
            valueName: "file"
        )
    )
    var faults: String?

    @Option(name: .customLong("fault-5xx"), help: ArgumentHelp("Probability of a 5xx answer (500, 502 or 503).", valueName: "p"))
    var fault5xx: Probability?

    @Option(name: .customLong("fault-429"), help: ArgumentHelp("Probability of a 429 without Retry-After.", valueName: "p"))
    var fault429: Probability?

    @Option(name: .customLong("fault-429-retry-after"), help: ArgumentHelp("Probability of a 429 with Retry-After.", valueName: "p"))
    var fault429RetryAfter: Probability?

    @Option(name: .customLong("retry-after"), help: ArgumentHelp("Retry-After value of injected 429s.", valueName: "seconds"))
    var retryAfter: Int?

    @Option(name: .customLong("fault-drop"), help: ArgumentHelp("Probability that the connection is closed without an answer.", valueName: "p"))
    var faultDrop: Probability?

    @Option(name: .customLong("fault-malformed"), help: ArgumentHelp("Probability of a 200 with a truncated body.", valueName: "p"))
    var faultMalformed: Probability?

    @Option(
        name: .customLong("fault-token-expiry"),
        help: ArgumentHelp("Probability that a protected call is answered 401 as if its token expired.", valueName: "p")
    )
    var faultTokenExpiry: Probability?

    @Option(
        name: .customLong("fault-early-expiry"),
        help: ArgumentHelp("Probability that a new code dies at a random point of its TTL.", valueName: "p")
    )
    var faultEarlyExpiry: Probability?

    @Option(
        name: .long,
        help: ArgumentHelp("Latency added to every API answer: fixed milliseconds plus a uniform random spread.", valueName: "ms[+spread]")
    )
    var latency: Latency?

    @Option(
        name: .customLong("fault-latency-spike"),
        help: ArgumentHelp("Probability that an API answer is held back by a latency spike.", valueName: "p")
    )
    var faultLatencySpike: Probability?

    @Option(name: .customLong("latency-spike"), help: ArgumentHelp("Length of a latency spike (default 5000).", valueName: "ms"))
    var latencySpikeMs: Int?

    @Option(name: .long, help: ArgumentHelp("Seed of the fault-injection random generator, for reproducible runs.", valueName: "n"))
    var seed: UInt64?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "OAuth device flow: the provider whose paths and answers are imitated (\(OAuthProvider.allCases.map(\.rawValue).joined(separator: ", ")); default generic, or the --oauth-config one).",
            valueName: "name"
        )
    )
    var oauthProvider: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "OAuth device flow: JSON file with provider, clients (client_id, token_endpoint_auth_method, client_secret, public_key_pem or public_key_file), interval, code_ttl, token lifetimes, base_url, tenant, realm.",
            valueName: "path"
        )
    )
    var oauthConfig: String?
}
