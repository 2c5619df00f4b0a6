#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The entitlement variants in force: TempPass MVPDs, degradation rules, home networks and item errors. The JSON of
/// `--entitlements FILE` and of `GET`/`PUT /_sim/entitlements`:
///
/// ```json
/// {"tempPass": {"TempPass_TEST40": {"ttl": 3600}, "flexibleTempPass": {"ttl": 86400, "maxResources": 3}},
///  "degradation": [{"serviceProvider": "REF30", "mvpd": "Cablevision", "rule": "AuthNAll"}],
///  "homeNetworks": {"Verizon": {"addresses": ["192.168.0.0/16"], "ttl": 3600}},
///  "itemErrors": {"resources": {"adult-movie": "authorization_denied_by_parental_controls"},
///                 "mvpds": {"DTV": {"code": "network_connection_timeout", "details": "…"}}}}
/// ```
package struct EntitlementSettings: Sendable, Hashable, Codable {
    /// TempPass MVPDs by id (published with `isTempPass: true`).
    package var tempPass: [String: TempPassSettings]
    /// Degradation rules; one naming the requestor wins over one for every requestor.
    package var degradation: [DegradationEntry]
    /// Home-based authentication by MVPD.
    package var homeNetworks: [String: HomeNetwork]
    /// Item-level decision errors by resource and by MVPD.
    package var itemErrors: ItemErrorLists

    /// Settings with the given variants (none by default: Adobe's regular flows).
    package init(
        tempPass: [String: TempPassSettings] = [:],
        degradation: [DegradationEntry] = [],
        homeNetworks: [String: HomeNetwork] = [:],
        itemErrors: ItemErrorLists = .init()
    ) {
        self.tempPass = tempPass
        self.degradation = degradation
        self.homeNetworks = homeNetworks
        self.itemErrors = itemErrors
    }

    private enum CodingKeys: String, CodingKey {
        case tempPass, degradation, homeNetworks, itemErrors
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.tempPass = try container.decodeIfPresent([String: TempPassSettings].self, forKey: .tempPass) ?? [:]
        self.degradation = try container.decodeIfPresent([DegradationEntry].self, forKey: .degradation) ?? []
        self.homeNetworks = try container.decodeIfPresent([String: HomeNetwork].self, forKey: .homeNetworks) ?? [:]
        self.itemErrors = try container.decodeIfPresent(ItemErrorLists.self, forKey: .itemErrors) ?? .init()
    }

    /// Reads the JSON file at `path`.
    package static func load(path: String) throws -> EntitlementSettings {
        // Foundation's coder stays: a `Codable` file format, and its `DecodingError` path is the error text users see.
        try JSONDecoder().decode(Self.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The degradation rule of `serviceProvider` × `mvpd`, if any.
    func degradationRule(serviceProvider: String, mvpd: String) -> DegradationRule? {
        let rules = self.degradation.filter { $0.mvpd == mvpd }
        return (rules.first { $0.serviceProvider == serviceProvider } ?? rules.first { $0.serviceProvider == nil })?.rule
    }

    /// The MVPD ids the settings name that `known` does not contain, for a readable refusal.
    package func unknownMVPDs(known: Set<String>) -> [String] {
        let named = Set(self.tempPass.keys).union(self.degradation.map(\.mvpd)).union(self.homeNetworks.keys)
            .union(self.itemErrors.mvpds.keys)
        return named.subtracting(known).sorted()
    }

    /// Adds the TempPass MVPDs missing from `configuration`'s MVPD list to it (named by their `displayName`, else
    /// their id), then installs the settings.
    package func apply(to configuration: inout SimulatorConfiguration) {
        for (id, settings) in self.tempPass.sorted(by: { $0.key < $1.key }) where configuration.mvpd(id: id) == nil {
            configuration.mvpds.append(SimulatedMVPD(id: id, displayName: settings.displayName ?? id, authPerAggregator: true))
        }
        configuration.entitlements = self
    }
}
