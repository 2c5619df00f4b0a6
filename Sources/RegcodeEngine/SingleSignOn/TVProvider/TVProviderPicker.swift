import RegcodeSupport

/// The `getAuthentication:filter` dictionary (AccessEnabler 2.4+; DOC `[REF]`): MVPD ids to show in
/// Apple's picker, in order, and the subset to feature.
package struct TVProviderFilter: Sendable, Hashable {
    package static let providersKey = "TV_PROVIDERS"
    package static let featuredKey = "FEATURED_TV_PROVIDERS"

    /// `TV_PROVIDERS`; `nil` = no restriction.
    package var providers: [String]?
    /// `FEATURED_TV_PROVIDERS`; `nil` = none featured.
    package var featured: [String]?

    package init(providers: [String]? = nil, featured: [String]? = nil) {
        self.providers = providers
        self.featured = featured
    }

    /// From the filter argument as an app passes it: the dictionary form, or the flat list of MVPD ids
    /// of AccessEnabler 2.0–2.3.1 (read as `TV_PROVIDERS`). Non-string entries are skipped.
    package init(_ json: JSONValue) {
        func ids(_ value: JSONValue?) -> [String]? {
            value?.arrayValue.map { $0.compactMap(\.stringValue) }
        }
        if let list = ids(json) {
            self.init(providers: list)
        } else {
            self.init(providers: ids(json[Self.providersKey]), featured: ids(json[Self.featuredKey]))
        }
    }

    package static let none = TVProviderFilter()
}

/// Apple's TV Provider picker as `presentTvProviderDialog` opens it (`supportedAccountProviderIdentifiers`
/// and `featuredAccountProviderIdentifiers` of the VSA request).
package struct TVProviderPicker: Sendable, Equatable {
    /// Shown providers, in order (each has a `platformMappingId`).
    package var providers: [MVPD]
    /// Featured providers, a subset of ``providers``.
    package var featured: [MVPD]

    package init(providers: [MVPD], featured: [MVPD] = []) {
        self.providers = providers
        self.featured = featured
    }

    /// Apple provider ids of ``providers``.
    package var providerIDs: [String] { providers.compactMap(\.platformMappingId) }
    /// Apple provider ids of ``featured``.
    package var featuredProviderIDs: [String] { featured.compactMap(\.platformMappingId) }

    /// Whether the user can pick `providerID` in this picker.
    package func offers(providerID: String) -> Bool { providerIDs.contains(providerID) }

    /// The `viewController` argument of `presentTvProviderDialog` / `dismissTvProviderDialog` on the wire
    /// (sso.md §3.2): `{kind: "VSAccountPicker", providers: [...], featured: [...]}`, each provider as
    /// `{id: <Apple provider id>, mvpd: <MVPD id>, displayName}`.
    package var viewController: JSONValue {
        func entry(_ mvpd: MVPD) -> JSONValue {
            [
                "id": .string(mvpd.platformMappingId ?? mvpd.id), "mvpd": .string(mvpd.id),
                "displayName": .string(mvpd.displayName),
            ]
        }
        return [
            "kind": "VSAccountPicker",
            "providers": .array(providers.map(entry)),
            "featured": .array(featured.map(entry)),
        ]
    }
}
