/// A degradation rule applied to a requestor × MVPD integration (Adobe's degraded access, REST v2 degraded flows).
package enum DegradationRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Authentication and authorization bypassed: sessions answer `authorize`/`degraded`, profiles are `degraded`
    /// (issuer Adobe), decisions permit with `source: degradation`.
    case authNAll = "AuthNAll"
    /// Authorization bypassed: decisions permit every resource with `source: degradation`.
    case authZAll = "AuthZAll"
    /// Authorization refused: decisions deny every resource with `authorization_denied_by_degradation_rule`.
    case authZNone = "AuthZNone"

    /// Whether decisions permit without asking the MVPD.
    var permits: Bool { self != .authZNone }
}

/// One degradation rule and the integration it applies to; without `serviceProvider` it applies to every requestor.
package struct DegradationEntry: Sendable, Hashable, Codable {
    package var serviceProvider: String?
    package var mvpd: String
    package var rule: DegradationRule

    /// `rule` for `mvpd` with `serviceProvider`, or with every requestor.
    package init(serviceProvider: String? = nil, mvpd: String, rule: DegradationRule) {
        self.serviceProvider = serviceProvider
        self.mvpd = mvpd
        self.rule = rule
    }
}
