#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SSO sections of pass-sim's configuration file (JSON, `--sso-config`):
///
/// ```json
/// {"mvpds": [{"id": "Comcast_SSO", "displayName": "Xfinity", "platformMappingId": "Comcast", "boardingStatus": "SUPPORTED", …}],
///  "integrations": [{"serviceProvider": "REF30", "mvpd": "Comcast_SSO", "degraded": false, "sso": {"appleTvos": false}, "ttl": 86400}],
///  "identityIssuers": {"roku": {"kind": "platform", "alg": "HS256", "key": "secret"}},
///  "samlIdentityProviders": {"Comcast_SSO": "/etc/lab/comcast-idp.pem"},
///  "ssoService": {"tokenTTL": 3600, "linkCodeTTL": 1800, "refreshWindow": 86400, "fieldNames": "samples"}}
/// ```
///
/// `mvpds` replaces the MVPD list; `integrations` sets the SSO settings of listed pairs (and, unless the command line
/// integrates them explicitly, nothing else); `identityIssuers` adds accepted external issuers;
/// `samlIdentityProviders` names, per MVPD id, the PEM file (or the PEM itself) of the identity provider whose
/// partner SAML answers are believed for it; `ssoService` sets the SSO Service's lifetimes and field names
/// (``SSOServiceSettings``).
package struct SSOConfigurationFile: Sendable, Decodable {
    /// One integration's settings with the pair it belongs to.
    package struct Integration: Sendable, Decodable {
        package var serviceProvider: String
        package var mvpd: String
        package var settings: IntegrationSettings

        private enum CodingKeys: String, CodingKey {
            case serviceProvider, mvpd
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.serviceProvider = try container.decode(String.self, forKey: .serviceProvider)
            self.mvpd = try container.decode(String.self, forKey: .mvpd)
            self.settings = try IntegrationSettings(from: decoder)
        }
    }

    package var mvpds: [SimulatedMVPD]?
    package var integrations: [Integration]?
    package var identityIssuers: [String: IdentityIssuer]?
    package var samlIdentityProviders: [String: String]?
    package var ssoService: SSOServiceSettings?

    /// Reads the file at `path`.
    package static func load(path: String) throws -> SSOConfigurationFile {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        // Foundation's coder stays: a `Codable` file format, and its `DecodingError` path is the error text users see.
        return try JSONDecoder().decode(Self.self, from: data)
    }

    /// Applies the sections to `configuration`; throws a readable message when they contradict each other.
    package func apply(to configuration: inout SimulatorConfiguration) throws(SSOConfigurationError) {
        if let mvpds {
            guard !mvpds.isEmpty else { throw SSOConfigurationError("mvpds must not be empty") }
            guard Set(mvpds.map(\.id)).count == mvpds.count else { throw SSOConfigurationError("mvpds has duplicate ids") }
            configuration.mvpds = mvpds
        }
        for integration in self.integrations ?? [] {
            guard configuration.mvpd(id: integration.mvpd) != nil else {
                throw SSOConfigurationError("integration \(integration.serviceProvider)×\(integration.mvpd): unknown MVPD")
            }
            configuration.integrationSettings[integration.serviceProvider, default: [:]][integration.mvpd] = integration.settings
        }
        for (mvpd, source) in self.samlIdentityProviders ?? [:] {
            guard configuration.mvpd(id: mvpd) != nil else { throw SSOConfigurationError("samlIdentityProviders \(mvpd): unknown MVPD") }
            if source.contains("-----BEGIN") {
                configuration.samlTrust.keyPEMByMVPD[mvpd] = source
            } else if let data = try? Data(contentsOf: URL(fileURLWithPath: source)) {
                configuration.samlTrust.keyPEMByMVPD[mvpd] = String(decoding: data, as: UTF8.self)
            } else {
                throw SSOConfigurationError("samlIdentityProviders \(mvpd): cannot read \(source)")
            }
        }
        if let ssoService {
            if let problem = ssoService.problem { throw SSOConfigurationError("ssoService: \(problem)") }
            configuration.ssoService = ssoService
        }
        for (issuer, settings) in self.identityIssuers ?? [:] {
            if let problem = settings.problem { throw SSOConfigurationError("identity issuer \(issuer): \(problem)") }
            configuration.identityIssuers[issuer] = settings
        }
    }
}

/// Why the SSO configuration file cannot be applied.
package struct SSOConfigurationError: Error, Sendable, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
