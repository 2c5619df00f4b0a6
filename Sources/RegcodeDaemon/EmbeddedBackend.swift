import ServiceLifecycle

/// A backend that runs in the daemon's process when the configuration names none: the `regcoded` executable wires its
/// Adobe Pass simulator as one. The daemon runs its service, binds the devices to it once it listens, signs the fleets'
/// software statement with its key and lets `simulator.approve` complete codes on it.
package protocol EmbeddedBackend: Sendable {
    /// The service answering the devices; it calls `ready` with its base URL (`http://127.0.0.1:8080`) once it listens.
    func service(ready: @escaping @Sendable (String) -> Void) -> any Service
    /// Completes `code` as a user on the second screen would, with `mvpd` or the device's selection; answers the MVPD
    /// signed in with.
    func approve(code: String, mvpd: String?) throws(EmbeddedApprovalError) -> String
    /// Signs the statement of fleets that name none: the backend trusts what it signs.
    var statementKey: any SoftwareStatementIssuer { get }
    /// The CA file the devices trust to reach it over TLS; nil over plain HTTP.
    var caFile: String? { get }
}

/// Signs software statements for regcoded's `software_id`, as a programmer downloads one from the TVE Dashboard.
package protocol SoftwareStatementIssuer: Sendable {
    /// A statement listing `redirectURIs`; nil when none can be signed (the unsigned placeholder is used).
    func issue(redirectURIs: [String]) -> String?
}

/// Why an embedded backend did not approve a code.
package enum EmbeddedApprovalError: Error, Sendable, Equatable {
    /// No such code was issued.
    case unknownCode
    /// The code expired, or a newer one replaced it.
    case codeGone
    /// The backend does not know this MVPD.
    case unknownMVPD(String)
    /// The code was already approved, with this MVPD.
    case alreadyCompleted(mvpd: String)
}

/// What the daemon knows when it builds its embedded backend, and the backend must agree with.
package struct EmbeddedBackendContext: Sendable {
    package let configuration: DaemonConfiguration
    /// The public key of the TV Provider's identity provider: the backend trusts its SAML answers for every
    /// Apple-mapped MVPD.
    package let tvProviderPublicKeyPEM: String
    /// The legacy v1 key pairs the fleets sign with (secret by public key): the backend must know them.
    package let signingKeys: [String: String]
    /// Connections its listener may hold: the fleet's share of the descriptor budget and a few visitors.
    package let maxConnections: Int
}

/// Builds the embedded backend, once, after the database lock is held (what it writes beside the database is then
/// this daemon's); a setting it cannot use is a ``ConfigurationError``.
package typealias EmbeddedBackendFactory = @Sendable (EmbeddedBackendContext) throws(ConfigurationError) -> any EmbeddedBackend
